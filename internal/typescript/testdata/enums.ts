enum Color { Red, Green, Blue = 10 }
enum Direction { Up = "UP", Down = "DOWN" }
const enum Flag { None = 0, A = 1 << 0, B = 1 << 1, AB = A | B }
enum Color { Purple = 20 } // enum merging

const names: string[] = [Color[Color.Green], Direction.Down];
return { names, ab: Flag.AB, purple: Color.Purple, blue: Color.Blue };
