const log: string[] = [];
function resource(name: string): Disposable {
  return { [Symbol.dispose]() { log.push("dispose " + name); } };
}

await null;
{
  using r = resource("a");
  log.push("body");
  if (log.length > 0) return log;
}
return [];
