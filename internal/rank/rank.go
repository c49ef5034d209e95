// Package rank selects the k-th smallest of a slice in linear expected
// time, without sorting it: the estimator, the adaptive buffers and the
// harness take medians and quantiles of sliding windows many times a
// second.
package rank

import "cmp"

// Nth reorders v so that v[k] is the element a sort would put there, with
// no larger element before it and no smaller one after it, and returns it.
// k must be in [0, len(v)). It is a quickselect (Hoare's partition around
// a median of three) and does not allocate. NaNs are not ordered: a slice
// of floats must hold none.
func Nth[T cmp.Ordered](v []T, k int) T {
	lo, hi := 0, len(v)-1
	for lo < hi {
		m := lo + (hi-lo)/2
		if v[m] < v[lo] {
			v[m], v[lo] = v[lo], v[m]
		}
		if v[hi] < v[lo] {
			v[hi], v[lo] = v[lo], v[hi]
		}
		if v[hi] < v[m] {
			v[hi], v[m] = v[m], v[hi]
		}
		p := v[m]
		i, j := lo, hi
		for i <= j {
			for v[i] < p {
				i++
			}
			for v[j] > p {
				j--
			}
			if i <= j {
				v[i], v[j] = v[j], v[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return v[k]
		}
	}
	return v[k]
}
