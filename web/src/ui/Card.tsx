// A playing card: its face (rank and suit symbol, red or black), as a
// button in your hand or a picture on the table. Every card has an
// accessible name ("ace of spades") and a stable data-testid ("card-AS").

import { cardCode, isJoker, isRed, rankCode, suitOf, type Card } from '../protocol/cards';
import { t } from '../i18n';
import { cardName, SUIT_SYMBOL } from './text';

function Face({ card }: { card: Card }) {
  const s = suitOf(card);
  if (isJoker(card) || s === null) {
    return (
      <span class="card-face joker" aria-hidden="true">
        <span class="rank">★</span>
        <span class="suit">{t('joker_face')}</span>
      </span>
    );
  }
  return (
    <span class={`card-face ${isRed(s) ? 'red' : 'black'}`} aria-hidden="true">
      <span class="rank">{rankCode(card)}</span>
      <span class="suit">{SUIT_SYMBOL[s]}</span>
    </span>
  );
}

export function CardView({ card, label, small }: { card: Card; label?: string; small?: boolean }) {
  return (
    <span class={`card${small ? ' small' : ''}`} role="img" aria-label={label ?? cardName(card)} data-testid={`table-card-${cardCode(card)}`}>
      <Face card={card} />
    </span>
  );
}

export function CardBack({ label, small }: { label?: string; small?: boolean }) {
  return <span class={`card back${small ? ' small' : ''}`} role={label ? 'img' : undefined} aria-label={label} aria-hidden={label ? undefined : 'true'} />;
}

export function CardButton({
  card,
  playable,
  onPlay,
  selected,
  dim = !playable,
}: {
  card: Card;
  playable: boolean;
  onPlay: (c: Card) => void;
  selected?: boolean;
  /** Greyed out: illegal now (when it is not your move, nothing is dimmed). */
  dim?: boolean;
}) {
  return (
    <button
      type="button"
      class={`card${playable ? ' playable' : ''}${dim ? ' illegal' : ''}${selected ? ' selected' : ''}`}
      aria-label={cardName(card)}
      aria-disabled={!playable}
      aria-pressed={selected === undefined ? undefined : selected}
      data-testid={`card-${cardCode(card)}`}
      data-playable={playable ? 'true' : 'false'}
      onClick={() => {
        if (playable) onPlay(card);
      }}
    >
      <Face card={card} />
    </button>
  );
}
