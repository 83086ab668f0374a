// Package plural writes a count with its noun the way a sentence reads it:
// "1 turn", "2 turns", "0 turns". The commands' messages print counts
// through it, so none says "1 turns". It imports nothing but the standard
// library.
package plural

import "strconv"

// N is n and noun, with an "s" unless n is 1: N(1, "turn") is "1 turn",
// N(3, "turn") "3 turns". A noun whose plural is not noun+"s" goes
// through Of.
func N[Int integer](n Int, noun string) string {
	return Of(n, noun, noun+"s")
}

// Of is n with one when n is 1 and many otherwise: Of(2, "launch",
// "launches") is "2 launches", Of(1, "series", "series") "1 series".
func Of[Int integer](n Int, one, many string) string {
	word := many
	if n == 1 {
		word = one
	}
	return strconv.FormatInt(int64(n), 10) + " " + word
}

// Word is the noun alone, for a count printed apart from it: Word(1,
// "turn", "turns") is "turn".
func Word[Int integer](n Int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// integer is every integer type a count comes in.
type integer interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64
}
