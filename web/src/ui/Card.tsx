// A playing card: its face drawn as SVG (CardArt.tsx), as a button in your
// hand or a picture on the table, and the back of a card you may not see.
// Every card has an accessible name ("ace of spades") and a stable
// data-testid ("card-AS").

import { Component } from 'preact';
import { cardCode, type Card } from '../protocol/cards';
import { t } from '../i18n';
import { cardName } from './text';
import { CardBackArt, CardFace } from './CardArt';

/**
 * A card's face, drawn again only when the card or the language's joker
 * word changes: a table event re-renders the table, and the faces (a few
 * dozen SVG elements each) are the bulk of it otherwise.
 */
class Face extends Component<{ card: Card }> {
  private word = '';
  override shouldComponentUpdate(next: { card: Card }): boolean {
    return next.card !== this.props.card || t('joker_face') !== this.word;
  }
  override render() {
    this.word = t('joker_face');
    return <CardFace card={this.props.card} jokerWord={this.word} />;
  }
}

/** A back never changes. */
class Back extends Component {
  override shouldComponentUpdate(): boolean {
    return false;
  }
  override render() {
    return <CardBackArt />;
  }
}

export function CardView({ card, label, small, style }: { card: Card; label?: string; small?: boolean; style?: string }) {
  return (
    <span class={`card${small ? ' small' : ''}`} role="img" aria-label={label ?? cardName(card)} data-testid={`table-card-${cardCode(card)}`} style={style}>
      <Face card={card} />
    </span>
  );
}

export function CardBack({ label, small, style }: { label?: string; small?: boolean; style?: string }) {
  return (
    <span class={`card back${small ? ' small' : ''}`} role={label ? 'img' : undefined} aria-label={label} aria-hidden={label ? undefined : 'true'} style={style}>
      <Back />
    </span>
  );
}

/**
 * The backs of the cards a player holds, fanned, with their count written
 * on them (so a newcomer sees how many are left without counting).
 */
export function FannedBacks({ count, label, testid }: { count: number; label: string; testid?: string }) {
  const shown = Math.min(count, 9);
  return (
    <span class="fan" role="img" aria-label={label} data-testid={testid} data-count={count}>
      {Array.from({ length: shown }, (_, i) => (
        <CardBack key={i} small style={`--fan:${String(shown > 1 ? i / (shown - 1) - 0.5 : 0)}`} />
      ))}
      {count > 0 && (
        <span class="fan-count" aria-hidden="true">
          {count}
        </span>
      )}
    </span>
  );
}

export function CardButton({
  card,
  playable,
  onPlay,
  selected,
  dim = !playable,
  index,
}: {
  card: Card;
  playable: boolean;
  onPlay: (c: Card) => void;
  selected?: boolean;
  /** Greyed out: illegal now (when it is not your move, nothing is dimmed). */
  dim?: boolean;
  /** Its place in the hand: the deal brings the cards in one after another. */
  index?: number;
}) {
  return (
    <button
      type="button"
      class={`card${playable ? ' playable' : ''}${dim ? ' illegal' : ''}${selected ? ' selected' : ''}`}
      aria-disabled={!playable}
      aria-pressed={selected === undefined ? undefined : selected}
      data-testid={`card-${cardCode(card)}`}
      data-playable={playable ? 'true' : 'false'}
      style={index === undefined ? undefined : `--i:${String(index)}`}
      onClick={() => {
        if (playable) onPlay(card);
      }}
    >
      <Face card={card} />
      {/* The name as the button's text, not an aria-label: the face's letters
          ("Q") are visible text, and a label must contain what is seen (WCAG
          2.5.3, axe's label-content-name-mismatch). The SVG is aria-hidden. */}
      <span class="sr-only">{cardName(card)}</span>
    </button>
  );
}
