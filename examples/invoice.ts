// A TypeScript step: stepbox run examples/invoice.ts --input @examples/invoice.input.json
// prints {"net":96,"vat":12.15,"total":108.15}. Types are erased, not checked;
// an error's position and stack are TypeScript's lines.
enum Rate {
  Standard = 20,
  Reduced = 5,
}

interface Line {
  sku: string;
  qty: number;
  unitPrice: number;
  rate: keyof typeof Rate;
}

const lines: Line[] = input.lines;
const cents = (n: number): number => Math.round(n * 100) / 100;
const net = lines.reduce((sum, l) => sum + l.qty * l.unitPrice, 0);
const vat = lines.reduce((sum, l) => sum + (l.qty * l.unitPrice * Rate[l.rate]) / 100, 0);
return { net: cents(net), vat: cents(vat), total: cents(net + vat) } satisfies Record<string, number>;
