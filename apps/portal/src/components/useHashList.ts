import { useCallback, useEffect, useRef, useState } from 'react';
import { errorText } from './PageTitle';

/** How a page's list is filtered in its address, and read. */
export interface HashListSpec<F, L> {
  /** The filters of the page's address (its param), defaults filled in. */
  parse: (param: string | undefined) => F;
  /** The address of filters: only what differs from the defaults. */
  hash: (filters: F) => string;
  load: (filters: F) => Promise<L>;
}

/**
 * A list loaded from the filters in the page's address (`#/events?status=FAILED&page=2`), so a
 * filtered list can be bookmarked and sent: read again whenever the address changes or on `reload`;
 * `apply` puts a form's filters into the address (or reads again when they are there already). A
 * failed read is `error` and keeps the list last shown.
 */
export function useHashList<F, L>(param: string | undefined, spec: HashListSpec<F, L>) {
  // The page passes a new spec each render; the address alone decides when to read.
  const specs = useRef(spec);
  specs.current = spec;
  const applied = spec.parse(param);
  const key = spec.hash(applied);
  const [form, setForm] = useState(applied);
  const [list, setList] = useState<L | null>(null);
  const [error, setError] = useState<string | null>(null);

  const reload = useCallback(async () => {
    const { parse, load } = specs.current;
    try {
      setList(await load(parse(param)));
      setError(null);
    } catch (err) {
      setError(errorText(err));
    }
  }, [param]);
  useEffect(() => {
    setForm(specs.current.parse(param));
    void reload();
  }, [key, reload, param]);

  const apply = (filters: F) => {
    const next = specs.current.hash(filters);
    if (next === window.location.hash) void reload();
    else window.location.hash = next;
  };
  return { applied, form, setForm, list, setList, error, setError, reload, apply };
}
