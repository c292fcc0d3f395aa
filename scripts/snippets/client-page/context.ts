// What the polling-client snippet takes as given: the page's own rendering of a position.
import type { Position } from 'waitgate';

declare global {
  function render(position: Position): void;
}
