/** Query strings that name inherited members at every position the bracket syntax allows. */
export function prototypeQueries(name: string): string[] {
  return [
    `${name}=1`, `${name}[x]=1`, `a[${name}]=1`, `a[${name}][name]=x`, `a[${name}][x]=1`, `a[${name}][${name}]=1`,
    `a[${name}][]=1`, `a[]=1&a[${name}]=2`, `a[0][${name}]=1`, `a=1&a[${name}]=2`, `a[${name}]=1&a[${name}][b]=2`,
    `filter[${name}][_eq]=1`, `filter[title][${name}]=1`, `fields[${name}]=id`, `aggregate[${name}]=*`, `deep[${name}][_limit]=1`,
  ];
}
