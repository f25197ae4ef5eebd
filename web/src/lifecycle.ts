// Things to undo when the page changes (charts to dispose, observers to stop).

const pending: (() => void)[] = [];

export function onLeave(fn: () => void): void {
  pending.push(fn);
}

export function leave(): void {
  for (const fn of pending.splice(0)) {
    try {
      fn();
    } catch {
      /* one failing cleanup must not keep the others from running */
    }
  }
}
