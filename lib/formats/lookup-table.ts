// A constant table looked up with a caller's or a provider's string (a block type, a hosted tool's
// name, a file extension). Built without a prototype, so `constructor`, `toString`, `__proto__`
// and the other Object.prototype members are misses like any unknown name, instead of hits that
// hand a function (or Object.prototype itself) to code expecting the table's values. Frozen: the
// tables are data, shared by every request.
export function lookupTable<T>(entries: Readonly<Record<string, T>>): Readonly<Record<string, T>> {
  return Object.freeze(Object.assign(Object.create(null) as Record<string, T>, entries));
}
