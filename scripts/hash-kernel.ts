/**
 * Generates the proof hash's WebAssembly kernels (lib/compaction/hash-kernel-module.ts) from
 * the WebAssembly text built below, assembled by wabt:
 *
 *   npx tsx scripts/hash-kernel.ts          # rewrites lib/compaction/hash-kernel-module.ts
 *   npx tsx scripts/hash-kernel.ts --wat    # prints the text
 *
 * The kernels compute exactly checksum.ts's column words and lane steps (fixedWords, and
 * ColumnLanes.finish), four rows per SIMD instruction: the row states live in the module's
 * memory as three Int32 arrays (lane A, lane B, word count), one lane per row. The text is
 * generated rather than written out because each kernel is one loop in 8 variants (value kind ×
 * nulls or not) that share their steps. test/compaction/hash-kernel.test.ts checks the committed
 * module is what this script assembles.
 */
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import wabtInit from 'wabt';

const A1 = 0xcc9e2d51;
const A2 = 0x1b873593;
const B1 = 0x85ebca77;
const B2 = 0xc2b2ae3d;
const NULL_WORD = 0;

const i32 = (c: number): string => String(c | 0);
const splat = (c: number): string => `(v128.const i32x4 ${i32(c)} ${i32(c)} ${i32(c)} ${i32(c)})`;
const get = (l: string): string => `(local.get ${l})`;

/** rotl by `r` of the vector in local `t`. */
const rotl = (t: string, r: number): string => `(v128.or (i32x4.shl ${get(t)} (i32.const ${r})) (i32x4.shr_u ${get(t)} (i32.const ${32 - r})))`;

/** Lane A's word part (checksum.ts keyA) of the vector `w`, into local `out`. */
const keyA = (w: string, out: string): string =>
  `(local.set ${out} (i32x4.mul ${w} ${splat(A1)})) (local.set ${out} (i32x4.mul ${rotl(out, 15)} ${splat(A2)}))`;
/** Lane B's word part (keyB). */
const keyB = (w: string, out: string): string =>
  `(local.set ${out} (i32x4.mul (v128.xor ${w} ${splat(0x5bd1e995)}) ${splat(B1)})) (local.set ${out} (i32x4.mul ${rotl(out, 13)} ${splat(B2)}))`;
/** Lane A's state step (stepA) of local `a` by the key vector `key`. */
const stepA = (a: string, key: string): string =>
  `(local.set ${a} (v128.xor ${get(a)} ${key})) (local.set ${a} (i32x4.add (i32x4.mul ${rotl(a, 13)} ${splat(5)}) ${splat(0xe6546b64)}))`;
/** Lane B's state step (stepB). */
const stepB = (b: string, key: string): string =>
  `(local.set ${b} (v128.xor ${get(b)} ${key})) (local.set ${b} (i32x4.add (i32x4.mul ${rotl(b, 17)} ${splat(9)}) ${splat(0x165667b1)}))`;

function keyAOf(w: number): number {
  const k = Math.imul(w | 0, A1);
  return Math.imul((k << 15) | (k >>> 17), A2);
}

function keyBOf(w: number): number {
  const j = Math.imul(w ^ 0x5bd1e995, B1);
  return Math.imul((j << 13) | (j >>> 19), B2);
}

const F64 = new Float64Array([Number.NaN]);
const NAN_WORDS = new Int32Array(F64.buffer);

type Kind = 'two' | 'sign' | 'double' | 'decimal';

/** Loads four rows' low and high words into locals $lo and $hi (and flags wide decimals in $wide). */
function loadWords(kind: Kind): string {
  const at = (shift: number, offset = 0): string =>
    `(v128.load offset=${offset} (i32.add ${get('$words')} (i32.shl ${get('$i')} (i32.const ${shift}))))`;
  switch (kind) {
    case 'sign':
      return `(local.set $lo ${at(2)}) (local.set $hi (i32x4.shr_s ${get('$lo')} (i32.const 31)))`;
    case 'two':
    case 'double':
      return `(local.set $v0 ${at(3)}) (local.set $v1 ${at(3, 16)})
        (local.set $lo (i8x16.shuffle 0 1 2 3 8 9 10 11 16 17 18 19 24 25 26 27 ${get('$v0')} ${get('$v1')}))
        (local.set $hi (i8x16.shuffle 4 5 6 7 12 13 14 15 20 21 22 23 28 29 30 31 ${get('$v0')} ${get('$v1')}))`;
    case 'decimal':
      // Row r's words w0..w3 at v_r; lo = w0s, hi = w1s, and the value fits 64 bits when w2 and w3 are hi's sign.
      return `(local.set $v0 ${at(4)}) (local.set $v1 ${at(4, 16)}) (local.set $v2 ${at(4, 32)}) (local.set $v3 ${at(4, 48)})
        (local.set $t (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 ${get('$v0')} ${get('$v1')}))
        (local.set $u (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 ${get('$v2')} ${get('$v3')}))
        (local.set $lo (i8x16.shuffle 0 1 2 3 8 9 10 11 16 17 18 19 24 25 26 27 ${get('$t')} ${get('$u')}))
        (local.set $hi (i8x16.shuffle 4 5 6 7 12 13 14 15 20 21 22 23 28 29 30 31 ${get('$t')} ${get('$u')}))
        (local.set $t (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 ${get('$v0')} ${get('$v1')}))
        (local.set $u (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 ${get('$v2')} ${get('$v3')}))
        (local.set $m (i32x4.shr_s ${get('$hi')} (i32.const 31)))
        (local.set $wide (v128.not (v128.and
          (i32x4.eq (i8x16.shuffle 0 1 2 3 8 9 10 11 16 17 18 19 24 25 26 27 ${get('$t')} ${get('$u')}) ${get('$m')})
          (i32x4.eq (i8x16.shuffle 4 5 6 7 12 13 14 15 20 21 22 23 28 29 30 31 ${get('$t')} ${get('$u')}) ${get('$m')}))))`;
  }
}

/** Any NaN becomes the one NaN the row encoding hashes. */
const canonicalNaN = `(local.set $m (v128.and (i32x4.eq (v128.and ${get('$hi')} ${splat(0x7ff00000)}) ${splat(0x7ff00000)})
    (i32x4.ne (v128.or (v128.and ${get('$hi')} ${splat(0xfffff)}) ${get('$lo')}) ${splat(0)})))
  (local.set $lo (v128.bitselect ${splat(NAN_WORDS[0])} ${get('$lo')} ${get('$m')}))
  (local.set $hi (v128.bitselect ${splat(NAN_WORDS[1])} ${get('$hi')} ${get('$m')}))`;

/** The validity of four rows from bit `$bit` of the bitmap at `$mask` (Arrow's, LSB first), as lane masks. */
const validBits = `(i32x4.ne (v128.and (i32x4.splat (i32.shr_u (i32.load (i32.add ${get('$mask')} (i32.shr_u ${get('$bit')} (i32.const 3))))
    (i32.and ${get('$bit')} (i32.const 7)))) (v128.const i32x4 1 2 4 8)) ${splat(0)})`;

/** Appends the rows of the lanes set in `lanes` to the list at `$deferred` (`$put` entries so far). */
const deferLanes = (lanes: string): string => `(if (v128.any_true ${lanes}) (then ${[0, 1, 2, 3]
  .map((l) => `(if (i32x4.extract_lane ${l} ${lanes}) (then (i32.store (i32.add ${get('$deferred')} (i32.shl ${get('$put')} (i32.const 2))) (i32.add ${get('$i')} (i32.const ${l}))) (local.set $put (i32.add ${get('$put')} (i32.const 1)))))`)
  .join(' ')}))`;

/** Stores four rows' lanes A and B, and adds `$inc` to their word counts. */
const storeStates = `(v128.store (i32.add ${get('$A')} ${get('$o')}) ${get('$a')})
    (v128.store (i32.add ${get('$B')} ${get('$o')}) ${get('$b')})
    (v128.store (i32.add ${get('$N')} ${get('$o')}) (i32x4.add (v128.load (i32.add ${get('$N')} ${get('$o')})) ${get('$inc')}))`;

/**
 * fixedWords over `count` rows (rounded up to 4: the caller pads), rows in order:
 * (A, B, N: state arrays at the chunk's first row; words: the values; idA, idB: the field id's
 * key parts, idWords 0 or 1; tagA, tagB: the type tag's; mask, bit: the validity bitmap and the
 * chunk's first bit in it, for the null variant; deferred: where wide decimals' row numbers go).
 * Returns how many rows it deferred (decimals beyond 64 bits: id mixed, value not).
 */
function fixedKernel(kind: Kind, nulls: boolean): string {
  const name = `${kind}${nulls ? '_nulls' : ''}`;
  const valid = nulls
    ? `(local.set $bit (i32.add ${get('$bit0')} ${get('$i')}))
       (local.set $valid ${validBits})`
    : '';
  // Rows whose value is not mixed here keep the state after the id: nulls mix the null word instead, wide decimals nothing.
  const keep = nulls || kind === 'decimal';
  const select = (value: string, other: string, when: string): string => `(v128.bitselect ${value} ${other} ${when})`;
  let words = '(local.set $inc (i32x4.add (local.get $idInc) (v128.const i32x4 3 3 3 3)))';
  if (kind === 'decimal') {
    if (nulls) words += ` (local.set $wide (v128.and ${get('$wide')} ${get('$valid')}))`;
    words += ` (local.set $inc (v128.bitselect (local.get $idInc) (local.get $inc) ${get('$wide')}))`;
  }
  let assign = '';
  if (keep) {
    let a = get('$a');
    let b = get('$b');
    if (kind === 'decimal') {
      a = select(get('$a0'), a, get('$wide'));
      b = select(get('$b0'), b, get('$wide'));
    }
    if (nulls) {
      a = select(a, '(local.get $na)', get('$valid'));
      b = select(b, '(local.get $nb)', get('$valid'));
      words += ` (local.set $inc (v128.bitselect (local.get $inc) (i32x4.add (local.get $idInc) (v128.const i32x4 1 1 1 1)) ${get('$valid')}))`;
    }
    assign = `(local.set $a ${a}) (local.set $b ${b})`;
  }
  const nullStates = nulls
    ? `(local.set $na ${get('$a0')}) (local.set $nb ${get('$b0')}) ${stepA('$na', splat(keyAOf(NULL_WORD)))} ${stepB('$nb', splat(keyBOf(NULL_WORD)))}`
    : '';
  const defer = kind === 'decimal' ? deferLanes(get('$wide')) : '';
  return `(func (export "${name}") (param $A i32) (param $B i32) (param $N i32) (param $words i32) (param $count i32)
    (param $idA i32) (param $idB i32) (param $idWords i32) (param $tagA i32) (param $tagB i32) (param $mask i32) (param $bit0 i32) (param $deferred i32) (result i32)
  (local $i i32) (local $o i32) (local $bit i32) (local $put i32)
  (local $a v128) (local $b v128) (local $a0 v128) (local $b0 v128) (local $na v128) (local $nb v128)
  (local $lo v128) (local $hi v128) (local $v0 v128) (local $v1 v128) (local $v2 v128) (local $v3 v128)
  (local $t v128) (local $u v128) (local $m v128) (local $valid v128) (local $wide v128) (local $inc v128) (local $idInc v128)
  (local $vidA v128) (local $vidB v128) (local $vtagA v128) (local $vtagB v128)
  (local.set $vidA (i32x4.splat ${get('$idA')})) (local.set $vidB (i32x4.splat ${get('$idB')}))
  (local.set $vtagA (i32x4.splat ${get('$tagA')})) (local.set $vtagB (i32x4.splat ${get('$tagB')}))
  (local.set $idInc (i32x4.splat ${get('$idWords')}))
  (block $done (loop $next
    (br_if $done (i32.ge_u ${get('$i')} ${get('$count')}))
    (local.set $o (i32.shl ${get('$i')} (i32.const 2)))
    (local.set $a (v128.load (i32.add ${get('$A')} ${get('$o')})))
    (local.set $b (v128.load (i32.add ${get('$B')} ${get('$o')})))
    (if ${get('$idWords')} (then ${stepA('$a', get('$vidA'))} ${stepB('$b', get('$vidB'))}))
    (local.set $a0 ${get('$a')}) (local.set $b0 ${get('$b')})
    ${valid}
    ${nullStates}
    ${loadWords(kind)}
    ${kind === 'double' ? canonicalNaN : ''}
    ${words}
    ${stepA('$a', get('$vtagA'))} ${stepB('$b', get('$vtagB'))}
    ${keyA(get('$lo'), '$t')} ${stepA('$a', get('$t'))}
    ${keyB(get('$lo'), '$t')} ${stepB('$b', get('$t'))}
    ${keyA(get('$hi'), '$t')} ${stepA('$a', get('$t'))}
    ${keyB(get('$hi'), '$t')} ${stepB('$b', get('$t'))}
    ${assign}
    ${defer}
    ${storeStates}
    (local.set $i (i32.add ${get('$i')} (i32.const 4)))
    (br $next)))
  ${get('$put')})`;
}

const TEXT_TAG = 5;

/**
 * utf8Words over `count` rows (any count: lanes past it are left as they were): the field id,
 * then for a value the tag, its byte length and its bytes two per word (as UTF-16 code units:
 * ASCII only), for a null the word 0. (offsets: the rows' count + 1 value offsets; base: the
 * offset that is `bytes`' first byte; mask, bit0, hasMask: the validity bits.) A value with a
 * byte ≥ 0x80 is left in `deferred` (id mixed, value not); returns how many.
 */
const utf8Kernel = `(func (export "utf8") (param $A i32) (param $B i32) (param $N i32) (param $offsets i32) (param $bytes i32) (param $base i32) (param $count i32)
    (param $idA i32) (param $idB i32) (param $idWords i32) (param $mask i32) (param $bit0 i32) (param $hasMask i32) (param $deferred i32) (result i32)
  (local $i i32) (local $o i32) (local $bit i32) (local $put i32) (local $k i32) (local $max i32) (local $x i32)
  (local $s0 i32) (local $s1 i32) (local $s2 i32) (local $s3 i32)
  (local $a v128) (local $b v128) (local $a0 v128) (local $b0 v128) (local $aIn v128) (local $bIn v128) (local $na v128) (local $nb v128)
  (local $live v128) (local $valid v128) (local $start v128) (local $len v128) (local $kv v128) (local $w v128) (local $two v128)
  (local $high v128) (local $act v128) (local $t v128) (local $ta v128) (local $tb v128) (local $ascii v128) (local $inc v128) (local $idInc v128)
  (local $vidA v128) (local $vidB v128)
  (local.set $vidA (i32x4.splat ${get('$idA')})) (local.set $vidB (i32x4.splat ${get('$idB')}))
  (local.set $idInc (i32x4.splat ${get('$idWords')}))
  (block $done (loop $next
    (br_if $done (i32.ge_s ${get('$i')} ${get('$count')}))
    (local.set $o (i32.shl ${get('$i')} (i32.const 2)))
    (local.set $aIn (v128.load (i32.add ${get('$A')} ${get('$o')})))
    (local.set $bIn (v128.load (i32.add ${get('$B')} ${get('$o')})))
    (local.set $a ${get('$aIn')}) (local.set $b ${get('$bIn')})
    (if ${get('$idWords')} (then ${stepA('$a', get('$vidA'))} ${stepB('$b', get('$vidB'))}))
    (local.set $a0 ${get('$a')}) (local.set $b0 ${get('$b')})
    (local.set $live (i32x4.lt_s (v128.const i32x4 0 1 2 3) (i32x4.splat (i32.sub ${get('$count')} ${get('$i')}))))
    (local.set $valid ${get('$live')})
    (if ${get('$hasMask')} (then
      (local.set $bit (i32.add ${get('$bit0')} ${get('$i')}))
      (local.set $valid (v128.and ${get('$live')} ${validBits}))))
    (local.set $na ${get('$a0')}) (local.set $nb ${get('$b0')}) ${stepA('$na', splat(keyAOf(NULL_WORD)))} ${stepB('$nb', splat(keyBOf(NULL_WORD)))}
    (local.set $start (v128.and ${get('$valid')} (i32x4.sub (v128.load (i32.add ${get('$offsets')} ${get('$o')})) (i32x4.splat ${get('$base')}))))
    (local.set $len (v128.and ${get('$valid')} (i32x4.sub (v128.load offset=4 (i32.add ${get('$offsets')} ${get('$o')})) (v128.load (i32.add ${get('$offsets')} ${get('$o')})))))
    ${stepA('$a', splat(keyAOf(TEXT_TAG)))} ${stepB('$b', splat(keyBOf(TEXT_TAG)))}
    ${keyA(get('$len'), '$t')} ${stepA('$a', get('$t'))}
    ${keyB(get('$len'), '$t')} ${stepB('$b', get('$t'))}
    (local.set $s0 (i32.add ${get('$bytes')} (i32x4.extract_lane 0 ${get('$start')})))
    (local.set $s1 (i32.add ${get('$bytes')} (i32x4.extract_lane 1 ${get('$start')})))
    (local.set $s2 (i32.add ${get('$bytes')} (i32x4.extract_lane 2 ${get('$start')})))
    (local.set $s3 (i32.add ${get('$bytes')} (i32x4.extract_lane 3 ${get('$start')})))
    (local.set $max (i32x4.extract_lane 0 ${get('$len')}))
    (if (i32.gt_s (local.tee $x (i32x4.extract_lane 1 ${get('$len')})) ${get('$max')}) (then (local.set $max ${get('$x')})))
    (if (i32.gt_s (local.tee $x (i32x4.extract_lane 2 ${get('$len')})) ${get('$max')}) (then (local.set $max ${get('$x')})))
    (if (i32.gt_s (local.tee $x (i32x4.extract_lane 3 ${get('$len')})) ${get('$max')}) (then (local.set $max ${get('$x')})))
    (local.set $high ${splat(0)})
    (local.set $k (i32.const 0))
    (block $end (loop $word
      (br_if $end (i32.ge_s ${get('$k')} ${get('$max')}))
      (local.set $kv (i32x4.splat ${get('$k')}))
      (local.set $w (i32x4.replace_lane 3 (i32x4.replace_lane 2 (i32x4.replace_lane 1 (i32x4.splat
          (i32.load16_u (i32.add ${get('$s0')} ${get('$k')})))
          (i32.load16_u (i32.add ${get('$s1')} ${get('$k')})))
          (i32.load16_u (i32.add ${get('$s2')} ${get('$k')})))
          (i32.load16_u (i32.add ${get('$s3')} ${get('$k')}))))
      (local.set $act (i32x4.lt_s ${get('$kv')} ${get('$len')}))
      (local.set $two (i32x4.lt_s (i32x4.add ${get('$kv')} ${splat(1)}) ${get('$len')}))
      ;; the second byte only where the value has it
      (local.set $w (v128.and ${get('$w')} (v128.or ${splat(0xff)} (v128.and ${get('$two')} ${splat(0xff00)}))))
      (local.set $high (v128.or ${get('$high')} (v128.and ${get('$act')} ${get('$w')})))
      (local.set $w (v128.or (v128.and ${get('$w')} ${splat(0xff)}) (i32x4.shl (i32x4.shr_u ${get('$w')} (i32.const 8)) (i32.const 16))))
      (local.set $ta ${get('$a')}) (local.set $tb ${get('$b')})
      ${keyA(get('$w'), '$t')} ${stepA('$ta', get('$t'))}
      ${keyB(get('$w'), '$t')} ${stepB('$tb', get('$t'))}
      (local.set $a (v128.bitselect ${get('$ta')} ${get('$a')} ${get('$act')}))
      (local.set $b (v128.bitselect ${get('$tb')} ${get('$b')} ${get('$act')}))
      (local.set $k (i32.add ${get('$k')} (i32.const 2)))
      (br $word)))
    (local.set $ascii (v128.and ${get('$valid')} (i32x4.eq (v128.and ${get('$high')} ${splat(0x8080)}) ${splat(0)})))
    ;; value rows: the words of the value; non-ASCII rows: the id only; nulls: the null word; rows past count: nothing
    (local.set $inc (i32x4.add ${get('$idInc')} (i32x4.add ${splat(2)} (i32x4.shr_u (i32x4.add ${get('$len')} ${splat(1)}) (i32.const 1)))))
    (local.set $inc (v128.bitselect ${get('$inc')} (v128.bitselect ${get('$idInc')}
      (v128.bitselect (i32x4.add ${get('$idInc')} ${splat(1)}) ${splat(0)} ${get('$live')}) ${get('$valid')}) ${get('$ascii')}))
    (local.set $a (v128.bitselect ${get('$a')} (v128.bitselect ${get('$a0')} (v128.bitselect ${get('$na')} ${get('$aIn')} ${get('$live')}) ${get('$valid')}) ${get('$ascii')}))
    (local.set $b (v128.bitselect ${get('$b')} (v128.bitselect ${get('$b0')} (v128.bitselect ${get('$nb')} ${get('$bIn')} ${get('$live')}) ${get('$valid')}) ${get('$ascii')}))
    (local.set $t (v128.andnot ${get('$valid')} ${get('$ascii')}))
    ${deferLanes(get('$t'))}
    ${storeStates}
    (local.set $i (i32.add ${get('$i')} (i32.const 4)))
    (br $next)))
  ${get('$put')})`;

/** murmur3's fmix32 of the vector in local `h`. */
const fmix = (h: string): string =>
  `(local.set ${h} (v128.xor ${get(h)} (i32x4.shr_u ${get(h)} (i32.const 16))))
   (local.set ${h} (i32x4.mul ${get(h)} ${splat(0x85ebca6b)}))
   (local.set ${h} (v128.xor ${get(h)} (i32x4.shr_u ${get(h)} (i32.const 13))))
   (local.set ${h} (i32x4.mul ${get(h)} ${splat(0xc2b2ae35)}))
   (local.set ${h} (v128.xor ${get(h)} (i32x4.shr_u ${get(h)} (i32.const 16))))`;

/**
 * ColumnLanes.finish over `count` rows (a multiple of 4): the sums of the rows' finished high
 * words and low words, each mod 2^64, stored as two i64 at `out`.
 */
const finishKernel = `(func (export "finish") (param $A i32) (param $B i32) (param $N i32) (param $count i32) (param $out i32)
  (local $i i32) (local $o i32) (local $a v128) (local $b v128) (local $n v128) (local $sa v128) (local $sb v128)
  (block $done (loop $next
    (br_if $done (i32.ge_u ${get('$i')} ${get('$count')}))
    (local.set $o (i32.shl ${get('$i')} (i32.const 2)))
    (local.set $n (v128.load (i32.add ${get('$N')} ${get('$o')})))
    (local.set $a (v128.xor (v128.load (i32.add ${get('$A')} ${get('$o')})) ${get('$n')}))
    (local.set $b (v128.xor (v128.load (i32.add ${get('$B')} ${get('$o')})) (i32x4.mul ${get('$n')} ${splat(0x27d4eb2f)})))
    (local.set $a (i32x4.add ${get('$a')} ${get('$b')}))
    (local.set $b (i32x4.add ${get('$b')} ${get('$a')}))
    ${fmix('$a')}
    ${fmix('$b')}
    (local.set $a (i32x4.add ${get('$a')} ${get('$b')}))
    (local.set $b (i32x4.add ${get('$b')} ${get('$a')}))
    (local.set $sa (i64x2.add ${get('$sa')} (i64x2.add (i64x2.extend_low_i32x4_u ${get('$a')}) (i64x2.extend_high_i32x4_u ${get('$a')}))))
    (local.set $sb (i64x2.add ${get('$sb')} (i64x2.add (i64x2.extend_low_i32x4_u ${get('$b')}) (i64x2.extend_high_i32x4_u ${get('$b')}))))
    (local.set $i (i32.add ${get('$i')} (i32.const 4)))
    (br $next)))
  (i64.store ${get('$out')} (i64.add (i64x2.extract_lane 0 ${get('$sa')}) (i64x2.extract_lane 1 ${get('$sa')})))
  (i64.store offset=8 ${get('$out')} (i64.add (i64x2.extract_lane 0 ${get('$sb')}) (i64x2.extract_lane 1 ${get('$sb')}))))`;

/** The module's text: one page of memory to start (the caller grows it), the kernels. */
export function hashKernelWat(): string {
  const kinds: Kind[] = ['two', 'sign', 'double', 'decimal'];
  const kernels = kinds.flatMap((k) => [fixedKernel(k, false), fixedKernel(k, true)]);
  return `(module
  (memory (export "memory") 1)
  ${kernels.join('\n  ')}
  ${utf8Kernel}
  ${finishKernel})\n`;
}

/** The assembled module. */
export async function hashKernelBytes(): Promise<Uint8Array> {
  const wabt = await wabtInit();
  const parsed = wabt.parseWat('hash-kernel.wat', hashKernelWat(), { simd: true });
  try {
    parsed.validate();
    return parsed.toBinary({}).buffer;
  } finally {
    parsed.destroy();
  }
}

/** The generated TypeScript module holding the bytes. */
export async function hashKernelModuleSource(): Promise<string> {
  const b64 = Buffer.from(await hashKernelBytes()).toString('base64');
  const lines = b64.match(/.{1,100}/g) ?? [];
  return `// Generated by \`npx tsx scripts/hash-kernel.ts\` from its WebAssembly text: do not edit.
// The proof hash's SIMD kernels (${(b64.length * 3) >> 2} bytes); see lib/compaction/hash-kernel.ts.
export const HASH_KERNEL_WASM =
${lines.map((l) => `  '${l}'`).join(' +\n')};\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--wat')) process.stdout.write(hashKernelWat());
  else {
    const out = join(dirname(fileURLToPath(import.meta.url)), '..', 'lib', 'compaction', 'hash-kernel-module.ts');
    writeFileSync(out, await hashKernelModuleSource());
    console.error(`wrote ${out}`);
  }
}
