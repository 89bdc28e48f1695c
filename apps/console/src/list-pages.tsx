import { useCallback, useEffect, useState } from "react";
import type { Credential } from "./api.js";
import { api } from "./client.js";
import { appendPage, pagePath, type PageBody } from "./paging.js";

export type Pages<T> = {
  rows: T[];
  error: unknown;
  loading: boolean;
  /** Loads the next page; null when the list has no more. */
  more: (() => void) | null;
  /** Starts again from the first page. */
  reload: () => void;
};

/**
 * A capped list as the console shows it: the first `limit` rows, then "more" pages
 * with the list's cursor; rows that arrive meanwhile are on the next reload.
 */
export function usePages<T>(path: string, options: { limit: number; key: (row: T) => string; auth?: Credential }, deps: unknown[] = []): Pages<T> {
  const [state, setState] = useState<{ rows: T[]; next: string | null; error: unknown; loading: boolean }>({
    rows: [],
    next: null,
    error: null,
    loading: true,
  });
  const [tick, setTick] = useState(0);
  const load = useCallback(
    async (cursor: string | null, rows: T[]) => {
      setState((s) => ({ ...s, loading: true, error: null }));
      try {
        const res = await api.send<PageBody<T>>("GET", pagePath(path, options.limit, cursor), options.auth ? { auth: options.auth } : {});
        setState({ rows: appendPage(rows, res.body.data, options.key), next: res.body.next_cursor ?? null, error: null, loading: false });
      } catch (error) {
        setState((s) => ({ ...s, error, loading: false }));
      }
    },
    [path, options.limit, options.auth?.kind, ...deps],
  );
  useEffect(() => {
    void load(null, []);
  }, [load, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  const more = state.next === null ? null : () => void load(state.next, state.rows);
  return { rows: state.rows, error: state.error, loading: state.loading, more, reload };
}

/** The "more" button of a paged list (absent at its end). */
export function MoreButton<T>({ pages, label }: { pages: Pages<T>; label: string }) {
  if (!pages.more) return null;
  return (
    <button className="secondary" disabled={pages.loading} onClick={pages.more}>
      {label}
    </button>
  );
}
