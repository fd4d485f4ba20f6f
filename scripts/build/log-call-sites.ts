/**
 * The log's call sites, resolved when the binary is built. klog's header
 * names the file and line that logged (`csi-handler.ts:129]`); at run time
 * that takes a stack capture per printed line (src/log/call-site.ts), ~20-25
 * µs in place under load, and at -v=2 an attach and a detach print five
 * lines. The build knows every call already: the TypeScript checker finds
 * each call of a logger method (Logger's info, warn and error, and
 * LeveledLogger's info: resolved by type, so a call through any variable or
 * chain is found and nothing else is), and the build hands the call its own
 * file and line as the method's last argument.
 *
 * Only arguments are added, on the call's last line, so every line of the
 * file keeps its number and the source map still names the lines written.
 */
import { relative, resolve } from "node:path";
import ts from "typescript";
import { BuildError } from "./errors";

/** LogCall is one call of a logger method: where its site goes, and the site. */
export interface LogCall {
  /** Offset in the file's text just after the call's last argument. */
  readonly insertAt: number;
  /** The call gives a message only, so `undefined` stands in for its fields first. */
  readonly fieldsMissing: boolean;
  /** The call's line (1-based), of the method's name: the line a stack names for it. */
  readonly line: number;
}

/** The logger's module, relative to the project's root. */
const loggerModule = "src/log/logger.ts";

/** The methods that take a site, by the class or interface declaring them. */
const loggingMethods: Readonly<Record<string, ReadonlySet<string>>> = {
  Logger: new Set(["info", "warn", "error"]),
  LeveledLogger: new Set(["info"]),
};

/**
 * programFor is the TypeScript program of `entry` and everything it imports
 * (dynamic imports too), with the project's compiler options.
 */
export function programFor(root: string, entry: string): ts.Program {
  const configPath = resolve(root, "tsconfig.json");
  const config = ts.getParsedCommandLineOfConfigFile(configPath, {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
      throw new BuildError(`${configPath}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n")}`);
    },
  });
  if (config === undefined) throw new BuildError(`${configPath}: not readable as a TypeScript project`);
  return ts.createProgram({ rootNames: [resolve(root, entry)], options: config.options });
}

/**
 * findLogCalls maps each of the program's own files (not a dependency's, not
 * a declaration file) that calls a logger method to its calls. A call the
 * build cannot give a site to (a spread argument, a site already given) is
 * an error naming its file and line.
 */
export function findLogCalls(program: ts.Program, root: string): Map<string, LogCall[]> {
  const checker = program.getTypeChecker();
  const loggerPath = resolve(root, loggerModule);
  const found = new Map<string, LogCall[]>();
  for (const file of program.getSourceFiles()) {
    if (file.isDeclarationFile || program.isSourceFileFromExternalLibrary(file) || file.fileName.includes("/node_modules/")) continue;
    const calls: LogCall[] = [];
    const visit = (node: ts.Node): void => {
      if (ts.isCallExpression(node) && callsLoggingMethod(node, checker, loggerPath)) calls.push(logCall(node, file));
      ts.forEachChild(node, visit);
    };
    visit(file);
    if (calls.length > 0) found.set(file.fileName, calls);
  }
  return found;
}

/** callsLoggingMethod says whether `call` resolves to one of loggingMethods in the logger's module. */
function callsLoggingMethod(call: ts.CallExpression, checker: ts.TypeChecker, loggerPath: string): boolean {
  const callee = call.expression;
  if (!ts.isPropertyAccessExpression(callee)) return false;
  const declaration = checker.getResolvedSignature(call)?.declaration;
  if (declaration === undefined || ts.isJSDocSignature(declaration) || declaration.getSourceFile().fileName !== loggerPath) return false;
  if (!ts.isMethodDeclaration(declaration) && !ts.isMethodSignature(declaration)) return false;
  const owner = declaration.parent;
  const ownerName = (ts.isClassDeclaration(owner) || ts.isInterfaceDeclaration(owner)) ? owner.name?.text : undefined;
  return ownerName !== undefined && loggingMethods[ownerName]?.has(callee.name.text) === true;
}

function logCall(call: ts.CallExpression, file: ts.SourceFile): LogCall {
  const callee = call.expression as ts.PropertyAccessExpression;
  const line = file.getLineAndCharacterOfPosition(callee.name.getStart(file)).line + 1;
  const where = `${file.fileName}:${line}`;
  if (call.arguments.some((argument) => ts.isSpreadElement(argument))) throw new BuildError(`${where}: a logger call with a spread argument; the build cannot add its call site`);
  const last = call.arguments[call.arguments.length - 1];
  if (last === undefined || call.arguments.length > 2) throw new BuildError(`${where}: a logger call with ${call.arguments.length} arguments; the build adds the call site to a message and its fields only`);
  return { insertAt: last.getEnd(), fieldsMissing: call.arguments.length === 1, line };
}

/**
 * withCallSites is `text` with each call given its site, `{ path, line }`,
 * `path` being the file relative to the project's root as the binary's
 * stacks name it (`src/controller/csi-handler.ts`).
 */
export function withCallSites(text: string, calls: readonly LogCall[], path: string): string {
  let out = text;
  for (const call of [...calls].sort((a, b) => b.insertAt - a.insertAt)) {
    const site = `{ path: ${JSON.stringify(path)}, line: ${call.line} }`;
    out = out.slice(0, call.insertAt) + (call.fieldsMissing ? `, undefined, ${site}` : `, ${site}`) + out.slice(call.insertAt);
  }
  return out;
}

/** projectPath is `fileName` relative to `root`, with forward slashes. */
export function projectPath(root: string, fileName: string): string {
  return relative(root, fileName).split("\\").join("/");
}
