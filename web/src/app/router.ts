// Client routes: / (entry or lobby), /t/<table id> (a table, also the link
// that joins a private one), /wallet (the Domino Coin ledger). The gateway answers every such path with
// index.html (services/gateway/internal/webui).

import { signal } from '@preact/signals';

export type Route = { name: 'home' } | { name: 'wallet' } | { name: 'table'; tableId: string };

/** The ledger page. */
export const WALLET_PATH = '/wallet';

export function parseRoute(pathname: string): Route {
  if (/^\/wallet\/?$/.test(pathname)) return { name: 'wallet' };
  const m = /^\/t\/([^/]+)\/?$/.exec(pathname);
  if (m?.[1]) {
    try {
      return { name: 'table', tableId: decodeURIComponent(m[1]) };
    } catch {
      return { name: 'home' };
    }
  }
  return { name: 'home' };
}

export function tablePath(id: string): string {
  return `/t/${encodeURIComponent(id)}`;
}

export const route = signal<Route>(parseRoute(typeof location === 'undefined' ? '/' : location.pathname));

export function navigate(path: string): void {
  if (typeof history !== 'undefined' && location.pathname !== path) history.pushState(null, '', path);
  route.value = parseRoute(path);
}

export function listenToHistory(): void {
  addEventListener('popstate', () => {
    route.value = parseRoute(location.pathname);
  });
}
