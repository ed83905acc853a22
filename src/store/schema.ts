/** Tables of the gateway's store. Times are epoch milliseconds; booleans are 0/1. */
export interface UsersTable {
  id: string;
  email: string;
  email_lower: string;
  password_hash: string | null;
  first_name: string | null;
  last_name: string | null;
  role: string;
  v1_key_enc: string;
  v1_user_id: string;
  status: string;
  created_at: number;
  updated_at: number | null;
}
export interface StaticTokensTable {
  id: string;
  user_id: string;
  token_hash: string;
  name: string;
  created_at: number;
  revoked_at: number | null;
  last_used_at: number | null;
}
export interface SessionsTable {
  id: string;
  user_id: string;
  created_at: number;
  revoked_at: number | null;
  revoke_reason: string | null;
}
export interface RefreshTokensTable {
  token_hash: string;
  session_id: string;
  status: string;
  expires_at: number;
  created_at: number;
  /** When it was rotated (migration 0013; null while active, and for tokens rotated before it). */
  rotated_at: number | null;
}
export interface IdMapTable {
  type: string;
  uuid: string;
  v1_id: string;
  source: string;
  created_at: number;
}
export interface RenderDataTable {
  v1_id: string;
  data: string;
  /** The characters of `data` (its weight, read without it; null: written by an instance before 0019). */
  data_chars: number | null;
  title: string | null;
  created_by: string | null;
  created_at: number;
}
export interface OverlaysTable {
  type: string;
  v1_id: string;
  field: string;
  value: string;
  updated_by: string | null;
  updated_at: number;
}
export interface IdempotencyTable {
  user_id: string;
  key: string;
  request_hash: string;
  state: string;
  status: number | null;
  response: string | null;
  created_at: number;
  lease_until: number | null;
  started_at: number | null;
  project_v1: string | null;
  render_name: string | null;
  render_v1_id: string | null;
}
export interface GatewayMetaTable {
  key: string;
  value: string;
}
export interface LoginLimitsTable {
  key: string;
  window_start: number;
  count: number;
}
export interface WebhookEventsTable {
  id: string;
  team: string;
  received_at: number;
}
export interface RenderVersionsTable {
  v1_id: string;
  updated_at: number;
  rank: number;
}
export interface IndexTeamsTable {
  team_id: string;
  team: string;
  members: string;
  state: string;
  backfilled_at: number | null;
  synced_at: number | null;
  webhook_at: number | null;
  lease_holder: string | null;
  lease_until: number | null;
  sync_started_at?: number | null;
  /** The change number of the last rewrite of the team's rows not followed row by row: a repair (migration 0015). */
  reset_seq?: number | null;
  /** The end of the last window of possibly lost webhook deliveries the team was walked again for (migration 0023). */
  webhook_checked_to?: number | null;
}
/** Each instance's webhook receiver, renewed while it runs (migration 0023). */
export interface WebhookReceiversTable {
  instance: string;
  since: number;
  seen_at: number;
  /** 1: the instance stopped (its receiver with it) at `seen_at`. */
  stopped: number;
}
/** Windows in which webhook deliveries may have been lost (migration 0023); team_id '' for every team. */
export interface WebhookGapsTable {
  id: string;
  team_id: string;
  from_ms: number;
  to_ms: number;
  reason: string;
}
/** Projects dropped from the render index, with the change number of the drop (migration 0016). */
export interface IndexDroppedProjectsTable {
  project_id: string;
  team_id: string;
  change_seq: number;
}
/** SQLite only (migration 0015): the newest change number a render row was written with (one row, id 1). */
export interface IndexChangesTable {
  id: number;
  seq: number;
}
/** The sync's v1 calls per scope (`team:<id>`, `key:<partition>`) and minute (ms since the epoch / 60 000), every instance's. */
export interface IndexSyncCallsTable {
  scope: string;
  minute: number;
  used: number;
}
export interface IndexProjectsTable {
  project_id: string;
  team_id: string;
  project: string;
  templates: string | null;
  backfilled: number;
  head_mark: number | null;
}
export interface IndexRendersTable {
  render_id: string;
  team_id: string;
  project_id: string;
  updated_at: number;
  rank: number;
  seen_at: number;
  render: string;
  /** The change number of the row's last write (migration 0015; 0 for rows older than it). */
  change_seq?: number;
}
export interface UsageTable {
  route: string;
  principal: string;
  principal_kind: string;
  count: number;
  first_seen: number;
  last_seen: number;
}
export interface CompareRoutesTable {
  route: string;
  total: number;
  differing: number;
  legacy_ms_total: number;
  translated_ms_total: number;
}
export interface CompareFieldsTable {
  route: string;
  path: string;
  kind: string;
  count: number;
  noise: number;
}
export interface CompareSamplesTable {
  id: string;
  route: string;
  path: string;
  kind: string;
  legacy: string | null;
  translated: string | null;
  request: string;
  created_at: number;
  /** The client of the compared request (src/auth/client-id.ts); null before migration 0012 or when unknown. */
  client: string | null;
  /** The answer's request line in compare_requests (migration 0018; `request` is empty then), null before. */
  request_id: string | null;
}
/** A compared answer's request line, once for all its samples (migration 0018). */
export interface CompareRequestsTable {
  id: string;
  request: string;
  created_at: number;
}
export interface ClientShapesTable {
  client: string;
  shape_key: string;
  user_id: string;
  shape: string;
  count: number;
  errors: number;
  ms_total: number;
  ms_max: number;
  calls: string;
  first_seen: number;
  last_seen: number;
  compared: number;
  differing: number;
}
/** The operator's label for a client or a principal (`user:…`, `static:…`), shown in the migration report (migration 0020). */
export interface ClientLabelsTable {
  client: string;
  label: string;
  set_at: number;
}
/** The User-Agents a client of family `other` came with (migration 0022): at most a few a client, counted. */
export interface ClientAgentsTable {
  client: string;
  agent: string;
  count: number;
  last_seen: number;
}
/** Deprecation rules (migration 0017): one row a rule, its JSON as set, when its id was first set. */
export interface DeprecationRulesTable {
  id: string;
  position: number;
  rule: string;
  set_at: number;
}
/** Calls matched by a deprecation rule, per rule, client and day (days since the epoch, UTC). */
export interface DeprecationCallsTable {
  rule_id: string;
  client: string;
  day: number;
  calls: number;
  refused: number;
  observed: number;
  last_seen: number;
}

export interface Database {
  users: UsersTable;
  static_tokens: StaticTokensTable;
  sessions: SessionsTable;
  refresh_tokens: RefreshTokensTable;
  id_map: IdMapTable;
  render_data: RenderDataTable;
  overlays: OverlaysTable;
  idempotency: IdempotencyTable;
  usage: UsageTable;
  compare_routes: CompareRoutesTable;
  compare_fields: CompareFieldsTable;
  compare_samples: CompareSamplesTable;
  compare_requests: CompareRequestsTable;
  gateway_meta: GatewayMetaTable;
  login_limits: LoginLimitsTable;
  webhook_events: WebhookEventsTable;
  render_versions: RenderVersionsTable;
  index_teams: IndexTeamsTable;
  webhook_receivers: WebhookReceiversTable;
  webhook_gaps: WebhookGapsTable;
  index_projects: IndexProjectsTable;
  index_renders: IndexRendersTable;
  index_sync_calls: IndexSyncCallsTable;
  index_changes: IndexChangesTable;
  index_dropped_projects: IndexDroppedProjectsTable;
  client_shapes: ClientShapesTable;
  client_labels: ClientLabelsTable;
  client_agents: ClientAgentsTable;
  deprecation_rules: DeprecationRulesTable;
  deprecation_calls: DeprecationCallsTable;
}
