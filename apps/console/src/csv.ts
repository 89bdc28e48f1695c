// CSV for spreadsheet export (RFC 4180 quoting). A cell that a spreadsheet would read as a
// formula (= + - @ tab CR at its start) is prefixed with ' so opening the file runs nothing.

export type CsvColumn<T> = [header: string, cell: (row: T) => string | number | null | undefined];

function cell(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return "";
  let text = String(value);
  if (typeof value === "string" && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function toCsv<T>(rows: T[], columns: CsvColumn<T>[]): string {
  const lines = [columns.map(([h]) => cell(h)).join(","), ...rows.map((r) => columns.map(([, f]) => cell(f(r))).join(","))];
  return `${lines.join("\r\n")}\r\n`;
}
