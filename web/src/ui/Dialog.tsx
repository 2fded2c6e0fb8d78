// A modal dialog: focus moves into it, Escape closes it, and focus goes
// back where it was.

import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { t } from '../i18n';

export function Dialog({
  title,
  onClose,
  children,
  wide,
  testid,
  focusSelf,
}: {
  title: string;
  onClose: () => void;
  children: ComponentChildren;
  wide?: boolean;
  testid?: string;
  /** Focus the dialog itself, not its first control: a dialog read from its top (the end of a game). */
  focusSelf?: boolean;
}) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const before = document.activeElement as HTMLElement | null;
    const el = ref.current;
    const first = focusSelf ? null : el?.querySelector<HTMLElement>('input, select, button:not(.dialog-close), [tabindex="0"]');
    (first ?? el)?.focus();
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') onClose();
    };
    document.addEventListener('keydown', onKey);
    return () => {
      document.removeEventListener('keydown', onKey);
      before?.focus();
    };
  }, [onClose, focusSelf]);
  return (
    <div class="dialog-backdrop" onClick={(e) => e.target === e.currentTarget && onClose()}>
      <div
        class={`dialog${wide ? ' wide' : ''}`}
        role="dialog"
        aria-modal="true"
        aria-label={title}
        tabIndex={-1}
        ref={ref}
        data-testid={testid}
      >
        <header class="dialog-head">
          <h2>{title}</h2>
          <button type="button" class="dialog-close" aria-label={t('close')} onClick={onClose}>
            ×
          </button>
        </header>
        <div class="dialog-body">{children}</div>
      </div>
    </div>
  );
}
