declare const input: { scale: number };
declare global {
  interface Array<T> { sum?(): number }
}
declare namespace Ambient { const v: number }

namespace Geometry {
  export interface Point { x: number; y: number }
  export const origin: Point = { x: 0, y: 0 };
  export function dist(a: Point, b: Point = origin): number {
    return Math.hypot(a.x - b.x, a.y - b.y);
  }
  export namespace Units {
    export const meter = 1;
  }
}
namespace Geometry {
  export const unit = Units.meter; // merged declaration
}
namespace A.B.C { export const deep = "deep"; }

return { d: Geometry.dist({ x: 3, y: 4 }), unit: Geometry.unit, deep: A.B.C.deep };
