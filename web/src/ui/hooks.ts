import { useEffect, useState } from 'preact/hooks';

/** Re-renders every ms milliseconds while active (for countdowns). */
export function useTick(ms: number, active: boolean): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!active) return undefined;
    const h = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(h);
  }, [ms, active]);
  return now;
}
