import type { ReactNode } from 'react';

export interface Column<T> {
  header: string;
  cell: (row: T) => ReactNode;
  /** The cell that names its row (`th scope="row"`). */
  names?: boolean;
  className?: string;
}

/**
 * A list as every portal page shows one: a header per column, each cell labelled with its column
 * (the phone layout stacks a row's cells under their labels), the row's actions last. Rows not read
 * yet (null) show as loading, none at all as `empty` when it is given.
 */
export function ListTable<T>({
  rows,
  empty,
  columns,
  keyOf,
  actions,
  rowClass,
  caption,
  className = 'list',
  testId,
}: {
  rows: T[] | null;
  empty?: string;
  columns: Column<T>[];
  keyOf: (row: T, index: number) => string;
  actions?: (row: T) => ReactNode;
  rowClass?: (row: T) => string | undefined;
  caption?: string;
  className?: string;
  testId?: string;
}) {
  if (rows === null) return <p role="status">Loading…</p>;
  if (rows.length === 0 && empty) return <p>{empty}</p>;
  return (
    <table className={className} data-testid={testId}>
      {caption && <caption className="visually-hidden">{caption}</caption>}
      <thead>
        <tr>
          {columns.map((c) => (
            <th key={c.header} scope="col">
              {c.header}
            </th>
          ))}
          {actions && (
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          )}
        </tr>
      </thead>
      <tbody>
        {rows.map((row, i) => (
          <tr key={keyOf(row, i)} className={rowClass?.(row)}>
            {columns.map((c) =>
              c.names ? (
                <th key={c.header} scope="row" data-label={c.header} className={c.className}>
                  {c.cell(row)}
                </th>
              ) : (
                <td key={c.header} data-label={c.header} className={c.className}>
                  {c.cell(row)}
                </td>
              ),
            )}
            {actions && <td className="actions-cell">{actions(row)}</td>}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
