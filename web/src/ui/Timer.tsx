// The move timer: seconds left until the server moves for the seat, as a
// number and a shrinking bar. Deadlines are absolute server times; the
// connection's measured clock skew turns them into local time.

import { t } from '../i18n';
import { useTick } from './hooks';

export function Timer({ deadline, serverNow, total = 30, mine }: { deadline: number | null; serverNow: () => number; total?: number; mine: boolean }) {
  useTick(250, deadline !== null);
  if (deadline === null) return null;
  const left = Math.max(0, Math.ceil((deadline - serverNow()) / 1000));
  const frac = Math.max(0, Math.min(1, left / total));
  return (
    <span
      class={`timer${left <= 5 ? ' urgent' : ''}${mine ? ' mine' : ''}`}
      role="timer"
      aria-label={t('timer_left', { n: left })}
      data-testid="move-timer"
    >
      <span class="timer-bar" style={{ width: `${Math.round(frac * 100)}%` }} />
      <span class="timer-text">{left}</span>
    </span>
  );
}
