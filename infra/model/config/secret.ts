const redacted = "[secret]";

/**
 * A secret read from stack config. It keeps the plain value out of logs, JSON and error
 * messages; the composition root turns it into a Pulumi secret with `reveal()`.
 */
export class SecretValue {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  /** The plain value; call only where it becomes a `pulumi.secret`. */
  reveal(): string {
    return this.#value;
  }

  toString(): string {
    return redacted;
  }

  toJSON(): string {
    return redacted;
  }

  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return redacted;
  }
}
