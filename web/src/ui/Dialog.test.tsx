import { afterEach, describe, expect, it } from 'vitest';
import { Dialog } from './Dialog';
import { mount } from '../testing/render';

afterEach(() => {
  document.body.innerHTML = '';
});

describe('Dialog', () => {
  it('focuses its first control, or itself when it is read from its top (the end of a game)', () => {
    const noop = () => undefined;
    const first = mount(
      <Dialog title="A" onClose={noop} testid="a">
        <button type="button">Play again</button>
      </Dialog>,
    );
    expect(document.activeElement?.textContent).toBe('Play again');
    first.unmount();
    mount(
      <Dialog title="B" onClose={noop} testid="b" focusSelf>
        <button type="button">Play again</button>
      </Dialog>,
    );
    expect(document.activeElement?.getAttribute('data-testid')).toBe('b');
  });
});
