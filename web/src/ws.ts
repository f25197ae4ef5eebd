// The task WebSocket (/ws/{task_id}): spec events {event, data}, ping every 20 s, reconnect
// with backoff until closed by the caller. watchTasks follows many tasks over one socket.

import { wsURL } from './api';

export interface TaskEvent {
  event: 'connected' | 'pong' | 'progress' | 'log' | 'complete' | string;
  data: Record<string, unknown> | null;
}

export interface TaskSocket {
  /** Sends msg as JSON when connected; dropped otherwise. */
  send(msg: object): void;
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
    send(msg) {
      if (ws?.readyState === WebSocket.OPEN) ws.send(JSON.stringify(msg));
    },
    close() {
      closed = true;
      clearInterval(ping);
      clearTimeout(timer);
      if (ws && ws.readyState <= WebSocket.OPEN) ws.close();
    },
  };
}

/** Follows several tasks' events over one socket. */
export interface TaskWatcher {
  watch(taskID: string): void;
  forget(taskID: string): void;
  close(): void;
}

/**
 * One socket for many tasks: opened on the first watched task, each further task added with
 * the server's `subscribe` action (again after every reconnect, which also resends each
 * task's current state); closed when nothing is watched. Events carry their task_id.
 */
export function watchTasks(onEvent: (e: TaskEvent) => void): TaskWatcher {
  const ids = new Set<string>();
  let sock: TaskSocket | null = null;
  const subscribe = (id: string) => sock?.send({ action: 'subscribe', channel: 'backtest', task_id: id });
  return {
    watch(id) {
      if (ids.has(id)) return;
      ids.add(id);
      if (sock) {
        subscribe(id);
        return;
      }
      sock = taskSocket(id, onEvent, (connected) => {
        if (connected) for (const x of ids) if (x !== id) subscribe(x);
      });
    },
    forget(id) {
      ids.delete(id);
      if (!ids.size) {
        sock?.close();
        sock = null;
      }
    },
    close() {
      ids.clear();
      sock?.close();
      sock = null;
    },
  };
}
