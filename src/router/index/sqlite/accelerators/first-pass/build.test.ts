import { describe, expect, it } from "bun:test";
import { idOrder } from "./build.ts";

/** The order a comparator sort gives: what merging two lists by id relies on. */
const reference = (ids: ArrayLike<number>) => Array.from({ length: ids.length }, (_, i) => i).sort((a, b) => ids[a]! - ids[b]!);

describe("a champion list's positions in id order", () => {
  it("lists every position once, ids ascending, for ids small and near 2^31, negative, and past Int32", () => {
    const shuffled = Int32Array.from({ length: 5000 }, (_, i) => ((i * 7919) % 5003) + 1);
    expect([...idOrder(shuffled)]).toEqual(reference(shuffled));
    const high = Int32Array.from([2 ** 31 - 1, 5, 2 ** 31 - 2, 0, 77]);
    expect([...idOrder(high)]).toEqual([3, 1, 4, 2, 0]);
    const negative = Int32Array.from([3, -2, 9, -7]);
    expect([...idOrder(negative)]).toEqual([3, 1, 0, 2]);
    const wide = Float64Array.from([2 ** 40, 3, 2 ** 35]);
    expect([...idOrder(wide)]).toEqual([1, 2, 0]);
    expect([...idOrder(new Int32Array(0))]).toEqual([]);
  });
});
