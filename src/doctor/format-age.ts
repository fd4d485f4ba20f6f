/** formatAge prints a duration the way kubectl's AGE column does: 45s, 3m12s, 5h, 2d3h. */
export function formatAge(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return `${minutes}m${seconds % 60 === 0 ? "" : `${seconds % 60}s`}`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours}h`;
  const days = Math.floor(hours / 24);
  return hours % 24 === 0 || days >= 8 ? `${days}d` : `${days}d${hours % 24}h`;
}
