// Renders Preact into a fresh element of the test DOM and flushes effects.

import { render, type ComponentChild } from 'preact';
import { act } from 'preact/test-utils';

export function mount(node: ComponentChild): { root: HTMLElement; rerender: (n: ComponentChild) => void; unmount: () => void } {
  const root = document.createElement('div');
  document.body.appendChild(root);
  void act(() => render(node, root));
  return {
    root,
    rerender: (n) => {
      void act(() => render(n, root));
    },
    unmount: () => {
      void act(() => render(null, root));
      root.remove();
    },
  };
}

export function byTestId(root: ParentNode, id: string): HTMLElement {
  const el = root.querySelector<HTMLElement>(`[data-testid="${id}"]`);
  if (!el) throw new Error(`no element with data-testid="${id}"`);
  return el;
}

export function click(el: Element): void {
  void act(() => {
    el.dispatchEvent(new MouseEvent('click', { bubbles: true }));
  });
}
