// The task WebSocket (/ws/{task_id}): spec events {event, data}, ping every 20 s, reconnect
// with backoff until closed by the caller.

import { wsURL } from './api';

export interface TaskEvent {
  event: 'connected' | 'pong' | 'progress' | 'log' | 'complete' | string;
  data: Record<string, unknown> | null;
}

export interface TaskSocket {
  close(): void;
}

export function taskSocket(taskID: string, onEvent: (e: TaskEvent) => void, onState?: (connected: boolean) => void): TaskSocket {
  let ws: WebSocket | null = null;
  let closed = false;
  let retry = 0;
  let ping: ReturnType<typeof setInterval> | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const open = () => {
    if (closed) return;
    ws = new WebSocket(wsURL(`/ws/${encodeURIComponent(taskID)}`));
    ws.onopen = () => {
      retry = 0;
      onState?.(true);
      ping = setInterval(() => ws?.readyState === WebSocket.OPEN && ws.send(JSON.stringify({ action: 'ping' })), 20000);
    };
    ws.onmessage = (m) => {
      try {
        const e = JSON.parse(String(m.data)) as TaskEvent;
        if (e && typeof e.event === 'string') onEvent(e);
      } catch {
        /* not an event */
      }
    };
    ws.onerror = () => {
      /* onclose follows */
    };
    ws.onclose = () => {
      clearInterval(ping);
      if (closed) return;
      onState?.(false);
      retry = Math.min(retry + 1, 6);
      timer = setTimeout(open, 250 * 2 ** retry);
    };
  };
  open();
  return {
    close() {
      closed = true;
      clearInterval(ping);
      clearTimeout(timer);
      if (ws && ws.readyState <= WebSocket.OPEN) ws.close();
    },
  };
}
