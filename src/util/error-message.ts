/** errorMessage is the text of anything thrown, for wrapping it in an error of our own. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
