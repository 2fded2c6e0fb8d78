import { describe, expect, it, vi } from 'vitest';

describe('the interface language', () => {
  it('is Georgian when nothing was chosen', async () => {
    localStorage.clear();
    vi.resetModules();
    const { lang, t } = await import('./index');
    expect(lang.value).toBe('ka');
    expect(t('lobby_title')).toBe('ლობი');
  });

  it('is the remembered one after a reload', async () => {
    localStorage.setItem('pulka.lang', 'tr');
    vi.resetModules();
    const { lang } = await import('./index');
    expect(lang.value).toBe('tr');
  });

  it('ignores a stored value that is not a language', async () => {
    localStorage.setItem('pulka.lang', 'xx');
    vi.resetModules();
    const { lang } = await import('./index');
    expect(lang.value).toBe('ka');
  });
});
