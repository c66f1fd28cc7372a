import { outputBuffer } from './launcher';

describe("a launched app's output", () => {
  it('is kept whole up to the limit', () => {
    const out = outputBuffer('app', 100);
    out.push('{"message":"a"}\n');
    out.push('{"message":"b"}\n');
    expect(out.text()).toBe('{"message":"a"}\n{"message":"b"}\n');
  });

  it("past the limit keeps the latest half from a line's start, says how much was dropped, and warns once on stderr", () => {
    const warnings: string[] = [];
    const write = jest.spyOn(process.stderr, 'write').mockImplementation((s) => {
      warnings.push(String(s));
      return true;
    });
    try {
      const out = outputBuffer('noisy-app', 100);
      for (let i = 0; i < 30; i++) out.push(`line ${String(i).padStart(3, '0')}\n`); // 9 characters each
      const text = out.text();
      const [head, ...rest] = text.split('\n');
      const kept = rest.join('\n');
      expect(head).toMatch(/^\[launcher: \d+ characters of earlier output dropped\]$/);
      expect(Number(/\d+/.exec(head)?.[0]) + kept.length).toBe(30 * 9);
      expect(kept.length).toBeLessThanOrEqual(100);
      expect(kept).toMatch(/^(line \d{3}\n)+$/); // whole lines
      expect(kept.endsWith('line 029\n')).toBe(true);
      expect(warnings.filter((w) => w.includes('noisy-app wrote more than 100 characters'))).toHaveLength(1);
    } finally {
      write.mockRestore();
    }
  });
});
