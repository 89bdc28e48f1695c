// The console's small component kit: cards, tables, forms, error boxes, the
// show-once secret, and an SVG bar chart. No dependencies beyond React.
import { useCallback, useEffect, useState, type FormEvent, type ReactNode, type SelectHTMLAttributes } from "react";
import { ApiError, describeError } from "./api.js";
import type { Bucket } from "./charts.js";
import { usd, type BudgetForm } from "./format.js";

export function Card({ title, children, actions }: { title: string; children: ReactNode; actions?: ReactNode }) {
  return (
    <section className="card">
      <header>
        <h2>{title}</h2>
        {actions}
      </header>
      {children}
    </section>
  );
}

/** A card's "Refresh" action: loads its list again. */
export function Refresh({ load }: { load: { reload: () => void } }) {
  return (
    <button className="secondary" onClick={load.reload}>
      Refresh
    </button>
  );
}

/** An API error as a sentence; "not available on this gateway" for routes this release lacks. */
export function ErrorBox({ error }: { error: unknown }) {
  if (!error) return null;
  const missing = error instanceof ApiError && error.routeMissing;
  return (
    <div className={missing ? "notice" : "error"} role="alert">
      {describeError(error)}
    </div>
  );
}

export type Loaded<T> = { data: T | undefined; error: unknown; loading: boolean; reload: () => void };

/** Loads once (and again on reload()); errors are kept for ErrorBox, never thrown. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[] = []): Loaded<T> {
  const [state, setState] = useState<{ data: T | undefined; error: unknown; loading: boolean }>({ data: undefined, error: null, loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => live && setState({ data, error: null, loading: false }),
      (error: unknown) => live && setState({ data: undefined, error, loading: false }),
    );
    return () => {
      live = false;
    };
  }, [tick, ...deps]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}

/** A form whose submit runs an async action and shows its error or result. */
export function ActionForm({
  onSubmit,
  submit,
  children,
  busyText = "Working…",
}: {
  onSubmit: () => Promise<ReactNode | void>;
  submit: string;
  children: ReactNode;
  busyText?: string;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [result, setResult] = useState<ReactNode>(null);
  const handle = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setResult(null);
    try {
      setResult((await onSubmit()) ?? null);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form onSubmit={handle} className="form">
      {children}
      <div className="form-actions">
        <button type="submit" disabled={busy}>
          {busy ? busyText : submit}
        </button>
      </div>
      <ErrorBox error={error} />
      {result ? <div className="ok">{result}</div> : null}
    </form>
  );
}

export function Field({ label, hint, children }: { label: string; hint?: string; children: ReactNode }) {
  return (
    <div className="field">
      {/* biome-ignore lint/a11y/noLabelWithoutControl: the control is the child passed in (an input, select or textarea) */}
      <label>
        <span>{label}</span>
        {children}
      </label>
      {hint ? <small>{hint}</small> : null}
    </div>
  );
}

/** A `<select>` of plain choices, each its own label; every other prop goes to the select. */
export function Select({ options, ...select }: { options: readonly string[] } & SelectHTMLAttributes<HTMLSelectElement>) {
  return (
    <select {...select}>
      {options.map((o) => (
        <option key={o} value={o}>
          {o}
        </option>
      ))}
    </select>
  );
}

type Change = (e: { target: { value: string } }) => void;

/** A spend budget's two inputs (`budget_units`, `budget_period`), bound to a form's fields of those names (sent with `budgetBody`). */
export function BudgetFields({ form, set, hint }: { form: BudgetForm; set: (field: keyof BudgetForm) => Change; hint: string }) {
  return (
    <div className="row">
      <Field label="Spend budget" hint={hint}>
        <input name="budget_units" inputMode="numeric" value={form.budget_units} onChange={set("budget_units")} />
      </Field>
      <Field label="Budget period" hint="UTC.">
        <select name="budget_period" value={form.budget_period} onChange={set("budget_period")}>
          <option value="day">day</option>
          <option value="month">month</option>
        </select>
      </Field>
    </div>
  );
}

/** A card of what `load` loaded: a refresh button, the load's error, and its rows in a table, then any children (a form, say). */
export function LoadedTable<T>({ title, load, children, ...table }: { title: string; load: Loaded<T[]>; children?: ReactNode } & Omit<TableProps<T>, "rows">) {
  return (
    <Card title={title} actions={<Refresh load={load} />}>
      <ErrorBox error={load.error} />
      <Table rows={load.data ?? []} {...table} />
      {children}
    </Card>
  );
}

type TableProps<T> = {
  rows: T[];
  columns: [string, (row: T) => ReactNode][];
  empty?: string;
  rowKey: (row: T) => string;
};

export function Table<T>({ rows, columns, empty = "Nothing yet.", rowKey }: TableProps<T>) {
  if (rows.length === 0) return <p className="muted">{empty}</p>;
  return (
    <div className="table-wrap">
      <table>
        <thead>
          <tr>
            {columns.map(([name]) => (
              <th key={name}>{name}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={rowKey(row)}>
              {columns.map(([name, cell]) => (
                <td key={name}>{cell(row)}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** A secret shown exactly once, right after creation, with a copy button; gone when dismissed. */
export function SecretOnce({ label, secret, onDismiss }: { label: string; secret: string; onDismiss: () => void }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(secret);
      setCopied(true);
    } catch {
      setCopied(false);
    }
  };
  return (
    <div className="secret" role="status">
      <p>
        <strong>{label}</strong> Copy it now: it is shown only once and cannot be retrieved later.
      </p>
      <code data-testid="secret">{secret}</code>
      <div className="form-actions">
        <button type="button" onClick={copy}>
          {copied ? "Copied" : "Copy"}
        </button>
        <button type="button" className="secondary" onClick={onDismiss}>
          I have stored it
        </button>
      </div>
    </div>
  );
}

export function Badge({ value }: { value: string }) {
  return <span className={`badge badge-${value.replace(/[^a-z_]/gi, "")}`}>{value}</span>;
}

/** Horizontal bars, one per bucket: simple enough to read at a glance. */
export function BarChart({ title, buckets, value, format }: { title: string; buckets: Bucket[]; value: (b: Bucket) => number; format: (n: number) => string }) {
  const max = Math.max(1, ...buckets.map(value));
  const row = 22;
  const labelWidth = 110;
  const width = 520;
  const barSpace = width - labelWidth - 90;
  return (
    <figure className="chart">
      <figcaption>{title}</figcaption>
      {buckets.length === 0 ? (
        <p className="muted">No calls yet.</p>
      ) : (
        <svg width="100%" viewBox={`0 0 ${width} ${buckets.length * row + 4}`} role="img" aria-label={title}>
          {buckets.map((b, i) => {
            const w = Math.max(value(b) > 0 ? 2 : 0, (value(b) / max) * barSpace);
            return (
              <g key={b.label} transform={`translate(0 ${i * row + 2})`}>
                <text x={labelWidth - 6} y={14} textAnchor="end" className="chart-label">
                  {b.label}
                </text>
                <rect x={labelWidth} y={3} width={w} height={14} rx={2} className="chart-bar" />
                <text x={labelWidth + w + 6} y={14} className="chart-value">
                  {format(value(b))}
                </text>
              </g>
            );
          })}
        </svg>
      )}
    </figure>
  );
}

export const money = (n: number) => usd(n);
