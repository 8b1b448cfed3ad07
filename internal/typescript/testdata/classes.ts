abstract class Shape {
  abstract area(): number;
  describe(): string { return `${this.constructor.name} with area ${this.area()}`; }
}

class Rect extends Shape {
  constructor(private readonly w: number, protected h: number, public label = "rect") {
    super();
  }
  area(): number { return this.w * this.h; }
}

class Square extends Rect {
  static count = 0;
  #secret = "s";
  declare extra: string;
  override label = "square";
  constructor(side: number) {
    super(side, side);
    Square.count++;
  }
  get secret(): string { return this.#secret; }
}

const shapes: Shape[] = [new Rect(2, 3), new Square(4)];
return { areas: shapes.map((s) => s.area()), desc: shapes[1].describe(), count: Square.count, label: (shapes[1] as Square).label };
