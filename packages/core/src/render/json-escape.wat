;; JSON string escaping of UTF-8 bytes, 16 bytes a step with WebAssembly SIMD: the module behind
;; escapeJsonInto (json-string.ts). `npm run wasm` compiles it into json-escape-wasm.ts, and
;; `npm run wasm:check` (part of `npm test`) fails when the two differ.
;;
;; JSON.stringify escapes only '"', '\' and bytes below 0x20, all ASCII, so the escape of UTF-8 is
;; the bytes one by one, every byte of a multi-byte character passed as it is. The caller copies a
;; piece of at most `input_bytes` to `input`, calls `escape`, and copies out what it wrote at `output`.
(module
  (memory (export "memory") 8)
  (global (export "input") i32 (i32.const 64))
  (global (export "input_bytes") i32 (i32.const 65536))
  ;; input + input_bytes; room for 6 * input_bytes (all escapes \u00XX) + 16 (a block's store).
  (global (export "output") i32 (i32.const 65600))
  ;; Each control byte's escape letter (\n → 'n'), 0 when it takes \u00XX; then the hex digits.
  (data (i32.const 0) "\00\00\00\00\00\00\00\00btn\00fr\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00")
  (data (i32.const 32) "0123456789abcdef")

  ;; Writes the escape of byte $b (one that needs one) at $o; returns the end.
  (func $escapeByte (param $o i32) (param $b i32) (result i32)
    (local $letter i32)
    ;; '"' and '\' escape as themselves, control bytes by the table.
    (local.set $letter
      (select (local.get $b) (i32.load8_u (i32.and (local.get $b) (i32.const 31))) (i32.ge_u (local.get $b) (i32.const 0x20))))
    (if (local.get $letter)
      (then
        (i32.store16 (local.get $o) (i32.or (i32.const 0x5c) (i32.shl (local.get $letter) (i32.const 8))))
        (return (i32.add (local.get $o) (i32.const 2)))))
    ;; '\u00' then two hex digits.
    (i32.store (local.get $o) (i32.const 0x3030755c))
    (i32.store8 offset=4 (local.get $o) (i32.load8_u offset=32 (i32.shr_u (local.get $b) (i32.const 4))))
    (i32.store8 offset=5 (local.get $o) (i32.load8_u offset=32 (i32.and (local.get $b) (i32.const 15))))
    (i32.add (local.get $o) (i32.const 6)))

  ;; Escapes [$in, $in + $len) to $o (room: 6 * $len + 16); returns the end of what it wrote.
  (func (export "escape") (param $in i32) (param $len i32) (param $o i32) (result i32)
    (local $end i32) (local $last i32) (local $v v128) (local $mask i32) (local $b i32) (local $k i32)
    (local.set $end (i32.add (local.get $in) (local.get $len)))
    (local.set $last (i32.sub (local.get $end) (i32.const 16)))
    (block $tail
      (loop $block
        (br_if $tail (i32.gt_s (local.get $in) (local.get $last)))
        ;; Store the 16 bytes as they are, then find the first that needs an escape, if any.
        (local.set $v (v128.load align=1 (local.get $in)))
        (v128.store align=1 (local.get $o) (local.get $v))
        (local.set $mask (i8x16.bitmask
          (v128.or
            (v128.or
              (i8x16.lt_u (local.get $v) (v128.const i8x16 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20))
              (i8x16.eq (local.get $v) (v128.const i8x16 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22)))
            (i8x16.eq (local.get $v) (v128.const i8x16 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c)))))
        (if (i32.eqz (local.get $mask))
          (then
            (local.set $in (i32.add (local.get $in) (i32.const 16)))
            (local.set $o (i32.add (local.get $o) (i32.const 16)))
            (br $block)))
        ;; Keep the bytes before it, write its escape, and go on from the byte after it.
        (local.set $k (i32.ctz (local.get $mask)))
        (local.set $b (i32.load8_u (i32.add (local.get $in) (local.get $k))))
        (local.set $in (i32.add (i32.add (local.get $in) (local.get $k)) (i32.const 1)))
        (local.set $o (call $escapeByte (i32.add (local.get $o) (local.get $k)) (local.get $b)))
        (br $block)))
    ;; The last 0-15 bytes, one at a time.
    (block $done
      (loop $byte
        (br_if $done (i32.ge_u (local.get $in) (local.get $end)))
        (local.set $b (i32.load8_u (local.get $in)))
        (local.set $in (i32.add (local.get $in) (i32.const 1)))
        (if (i32.or (i32.lt_u (local.get $b) (i32.const 0x20)) (i32.or (i32.eq (local.get $b) (i32.const 0x22)) (i32.eq (local.get $b) (i32.const 0x5c))))
          (then (local.set $o (call $escapeByte (local.get $o) (local.get $b))))
          (else
            (i32.store8 (local.get $o) (local.get $b))
            (local.set $o (i32.add (local.get $o) (i32.const 1)))))
        (br $byte)))
    (local.get $o))
)
