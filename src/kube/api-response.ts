import type { StreamedAnswer, WholeAnswer } from "./api-http2-connection";

/** A reader of an answer's body piece by piece: undefined at its end. */
export interface BodyReader {
  read(): Promise<Uint8Array | undefined>;
  /** cancel stops the body early: the server stops sending it, and the connection is freed. */
  cancel(): Promise<void>;
}

/**
 * ApiAnswer is one answer of the API server as KubeClient reads it,
 * whichever way it came: a stream of our HTTP/2 connection, or fetch's
 * HTTP/1.1 (a server or proxy without HTTP/2). Its body is read once.
 */
export interface ApiAnswer {
  readonly status: number;
  text(): Promise<string>;
}

/** ApiStream is an answer whose body may also be read piece by piece as it arrives (a watch's). */
export interface ApiStream extends ApiAnswer {
  reader(): BodyReader;
}

/** wholeResponse is an HTTP/2 answer read whole. */
export function wholeResponse(answer: WholeAnswer): ApiAnswer {
  return { status: answer.status, text: async () => answer.body.toString("utf8") };
}

/** streamedResponse is an HTTP/2 answer still arriving (a watch). */
export function streamedResponse(answer: StreamedAnswer): ApiStream {
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

/** fetchResponse is fetch's answer over HTTP/1.1, which can be read either way. */
export function fetchResponse(response: Response): ApiStream {
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
