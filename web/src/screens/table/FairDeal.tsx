// The "verify" view of a finished hand: what was committed before the deal,
// what was revealed after it, every seat's client seed (yours marked), and
// the check itself, run here in the browser with Web Crypto (verify.ts).

import { useEffect, useState } from 'preact/hooks';
import { t } from '../../i18n';
import type { FairHand } from '../../fairdeal/hands';
import { verifyHand, type Verification } from '../../fairdeal/verify';
import { cardName } from '../../ui/text';
import { Dialog } from '../../ui/Dialog';

const ZERO_SEED = '00'.repeat(32);

type Run = { state: 'checking' } | { state: 'done'; v: Verification } | { state: 'error'; why: string };

function Check({ ok, text, testid }: { ok: boolean | null; text: string; testid: string }) {
  const mark = ok === null ? '–' : ok ? '✓' : '✗';
  return (
    <li class={ok === null ? 'fair-check unknown' : ok ? 'fair-check pass' : 'fair-check fail'} data-testid={testid} data-ok={String(ok)}>
      <span class="mark" aria-hidden="true">
        {mark}
      </span>{' '}
      {text}
    </li>
  );
}

export function FairDealDialog({ hand, names, onClose }: { hand: FairHand; names: string[]; onClose: () => void }) {
  const [run, setRun] = useState<Run>({ state: 'checking' });
  useEffect(() => {
    let stop = false;
    setRun({ state: 'checking' });
    verifyHand(hand).then(
      (v) => {
        if (!stop) setRun({ state: 'done', v });
      },
      (e: unknown) => {
        if (!stop) setRun({ state: 'error', why: e instanceof Error ? e.message : String(e) });
      },
    );
    return () => {
      stop = true;
    };
  }, [hand]);
  const r = hand.revealed;
  const status = run.state === 'checking' ? 'checking' : run.state === 'error' ? 'error' : run.v.ok ? 'verified' : 'failed';
  return (
    <Dialog title={t('fair_title', { n: hand.handIndex + 1 })} onClose={onClose} wide testid="fair-deal">
      <p class="hint">{t('fair_intro')}</p>
      <p class={`fair-result ${status}`} role="status" data-testid="verify-result" data-status={status}>
        {run.state === 'checking'
          ? t('fair_checking')
          : run.state === 'error'
            ? t('fair_error', { why: run.why })
            : run.v.ok
              ? t('fair_verified')
              : t('fair_failed')}
      </p>
      {run.state === 'done' && (
        <ul class="fair-checks">
          <Check ok={run.v.commitmentOk && run.v.sameCommitment} text={t('fair_check_commitment')} testid="fair-check-commitment" />
          <Check
            ok={run.v.seedIncluded}
            text={
              run.v.seedUnknown === 'elsewhere'
                ? t('fair_check_seed_elsewhere')
                : run.v.seedUnknown === 'late'
                  ? t('fair_check_seed_late')
                  : run.v.seedIncluded === null
                    ? t('fair_check_seed_unknown')
                    : t('fair_check_seed')
            }
            testid="fair-check-seed"
          />
          <Check ok={run.v.dealOk} text={run.v.dealOk === null ? t('fair_check_deal_unknown') : t('fair_check_deal')} testid="fair-check-deal" />
        </ul>
      )}
      <dl class="fair-data">
        <dt>{t('fair_commitment')}</dt>
        <dd class="hex" data-testid="fair-commitment">
          {hand.commitment}
        </dd>
        <dt>{t('fair_server_seed')}</dt>
        <dd class="hex" data-testid="fair-server-seed">
          {r?.serverSeed ?? ''}
        </dd>
        <dt>{t('fair_client_seeds')}</dt>
        <dd>
          <ol class="fair-seeds">
            {(r?.clientSeeds ?? []).map((s, i) => (
              <li key={i} data-testid={`fair-seed-${i}`} class={i === hand.seedSeat ? 'you' : ''}>
                <span class="name">{names[i] ?? String(i + 1)}</span>
                {i === hand.seedSeat && <strong> ({t('fair_your_seed')})</strong>}: <span class="hex">{s === ZERO_SEED ? t('fair_no_seed') : s}</span>
              </li>
            ))}
          </ol>
        </dd>
        {run.state === 'done' && (
          <>
            <dt>{t('fair_deck')}</dt>
            <dd class="fair-deck" data-testid="fair-deck">
              {run.v.deck.map((c) => cardName(c)).join(', ')}
            </dd>
          </>
        )}
      </dl>
    </Dialog>
  );
}
