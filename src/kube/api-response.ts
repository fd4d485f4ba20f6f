import type { StreamedAnswer, WholeAnswer } from "./api-http2-connection";

/** A reader of an answer's body piece by piece: undefined at its end. */
export interface BodyReader {
  read(): Promise<Uint8Array | undefined>;
  /** cancel stops the body early: the server stops sending it, and the connection is freed. */
  cancel(): Promise<void>;
}

/**
 * ApiResponse is one answer of the API server as KubeClient reads it,
 * whichever way it came: a stream of our HTTP/2 connection, or fetch's
 * HTTP/1.1 (a server or proxy without HTTP/2). Its body is read once,
 * whole (`text`) or piece by piece (`reader`).
 */
export interface ApiResponse {
  readonly status: number;
  text(): Promise<string>;
  reader(): BodyReader;
}

/** wholeResponse is an HTTP/2 answer read whole. */
export function wholeResponse(answer: WholeAnswer): ApiResponse {
  return {
    status: answer.status,
    text: async () => answer.body.toString("utf8"),
    reader: () => {
      let done = false;
      return {
        read: async () => {
          if (done) return undefined;
          done = true;
          return answer.body;
        },
        cancel: async () => {},
      };
    },
  };
}

/** streamedResponse is an HTTP/2 answer still arriving (a watch). */
export function streamedResponse(answer: StreamedAnswer): ApiResponse {
  return {
    status: answer.status,
    text: async () => {
      const pieces: Buffer[] = [];
      for (let piece = await answer.next(); piece !== undefined; piece = await answer.next()) pieces.push(piece);
      return Buffer.concat(pieces).toString("utf8");
    },
    reader: () => ({
      read: () => answer.next(),
      cancel: async () => answer.cancel(),
    }),
  };
}

/** fetchResponse is fetch's answer over HTTP/1.1. */
export function fetchResponse(response: Response): ApiResponse {
  return {
    status: response.status,
    text: () => response.text(),
    reader: () => {
      const body = response.body;
      if (body === null) return { read: async () => undefined, cancel: async () => {} };
      const reader = body.getReader();
      return {
        read: async () => {
          const { done, value } = await reader.read();
          return done ? undefined : value;
        },
        // Releasing the reader lets fetch close the connection when we stop early.
        cancel: () => reader.cancel().catch(() => undefined),
      };
    },
  };
}
