// usePoll: calls `load` now and then every `everyMs` after the previous call settled (never two at
// once), while `key` stays the same; `refresh()` reloads at once (after an action).
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

export function usePoll(load, everyMs, key) {
  const [state, setState] = useState({ data: null, error: null });
  const timer = useRef(null);
  const run = useRef(null);

  useEffect(() => {
    let alive = true;
    setState({ data: null, error: null });
    run.current = async () => {
      clearTimeout(timer.current);
      try {
        const data = await load();
        if (alive) setState({ data, error: null });
      } catch (error) {
        if (alive) setState((s) => ({ data: s.data, error }));
      }
      if (alive) timer.current = setTimeout(run.current, everyMs);
    };
    run.current();
    return () => {
      alive = false;
      clearTimeout(timer.current);
    };
  }, [key]);

  const refresh = useCallback(() => run.current && run.current(), []);
  return { ...state, refresh };
}
