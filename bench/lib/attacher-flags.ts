/**
 * What an attacher binary says about its own flags: the bench asks the
 * binary it runs, not the source tree next to it, which may be another
 * commit (--ours).
 */

/**
 * honouredFlags reads a --help text in the layout of Go's
 * flag.PrintDefaults ("  -name type", then the help indented by a tab, or
 * on the same line for a short flag) and returns the names of the flags it
 * lists whose help does not say they have "no effect": a flag accepted only
 * so that upstream's command lines still parse says so in its help, as
 * --automaxprocs does.
 */
export function honouredFlags(help: string): ReadonlySet<string> {
  const honoured = new Set<string>();
  let flag: { readonly name: string; text: string } | undefined;
  const close = () => {
    if (flag !== undefined && !flag.text.includes("no effect")) honoured.add(flag.name);
  };
  for (const line of help.split("\n")) {
    const head = /^ {2}-([\w-]+)(.*)$/.exec(line);
    if (head === null) {
      if (flag !== undefined) flag.text += line;
      continue;
    }
    close();
    flag = { name: head[1] ?? "", text: head[2] ?? "" };
  }
  close();
  return honoured;
}
