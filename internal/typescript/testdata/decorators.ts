const calls: string[] = [];

function logged<This, Args extends unknown[], R>(
  target: (this: This, ...args: Args) => R,
  context: ClassMethodDecoratorContext<This, (this: This, ...args: Args) => R>,
) {
  return function (this: This, ...args: Args): R {
    calls.push(String(context.name));
    return target.call(this, ...args);
  };
}

function tagged<T extends new (...args: any[]) => object>(cls: T, ctx: ClassDecoratorContext<T>) {
  ctx.addInitializer(function (this: T) {
    calls.push("tagged " + ctx.name);
  });
  return cls;
}

function double(_: undefined, _ctx: ClassFieldDecoratorContext) {
  return (v: number) => v * 2;
}

@tagged
class Counter {
  @double count = 21;
  @logged inc(): number { return ++this.count; }
}

const c = new Counter();
return { value: c.inc(), calls, name: Counter.name };
