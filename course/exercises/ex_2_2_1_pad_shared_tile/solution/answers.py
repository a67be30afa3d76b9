"""Exercise 2.2.1, a solution: passes = the largest number of DISTINCT words one bank (word % 32) is asked for."""
# word s * i: the banks s * i % 32 take 32 / gcd(s, 32) values, each asked gcd(s, 32) times -> gcd(s, 32) passes
STRIDE_PASSES = {3: 1, 6: 2, 16: 16, 24: 8, 33: 1, 64: 32}

# word P * i + c: the same rule with the pitch as the stride -> gcd(P, 32)
COLUMN_PASSES = {32: 32, 33: 1, 34: 2, 36: 4, 40: 8, 48: 16}

PATTERN_PASSES = {
    "every lane reads word 0": 1,                       # one word: a broadcast
    "lane i reads word i // 2": 1,                      # 16 words in 16 banks, each shared by two lanes
    "lane i reads word 32 * (i // 2)": 16,              # 16 distinct words, all in bank 0
    "lane i reads word 32 * i + (5 ^ i)": 1,            # bank 5 ^ i: a permutation of the 32 banks
    "lane i reads tile[i + 32][7] of float tile[64][65]": 1,    # word 65 i + 2087: bank (i + 7) % 32
}

PAD = 1                 # pitch 33: gcd(33, 32) = 1

ALIGNED_PAD = (4, 4)    # pitch 36: gcd(36, 32) = 4; every multiple of 4 has gcd >= 4, and 36 is the first with 4
