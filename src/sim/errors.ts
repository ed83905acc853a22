/** An HTTP answer the simulator gives instead of data (v1 error shape). */
export class SimHttpError extends Error {
  constructor(readonly status: number, readonly body: Record<string, unknown>, readonly headers: Record<string, string> = {}) {
    super(String(body.error));
  }
}


export function validation(details: { field: string; message: string; code: string }[]): SimHttpError {
  const message = details.length === 1 ? (details[0] as { message: string }).message : `${details.length} validation errors`;
  return new SimHttpError(422, { error: 'Validation failed.', message, details });
}
