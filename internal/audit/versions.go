package audit

import (
	"bytes"
	"slices"
)

// countVersion counts one more record of the robots.txt version h.
func countVersion(vs []VersionCount, h []byte) []VersionCount {
	for i := range vs {
		if vs[i].Hash == string(h) {
			vs[i].Count++
			return vs
		}
	}
	if len(vs) < MaxVersions {
		return append(vs, VersionCount{Hash: string(h), Count: 1})
	}
	vs[MaxVersions-1].Hash = OtherVersions
	vs[MaxVersions-1].Count++
	return vs
}

// countJudged counts one more violation judged against each of the
// versions listed: a version listed twice counts once, and the last slot,
// which stands for every version past the first MaxVersions-1 once they
// are full (OtherVersions), once for all of them.
func countJudged(vs []VersionCount, list [][]byte) []VersionCount {
	const last = MaxVersions - 1
	inLast := false
	for i, v := range list {
		if slices.ContainsFunc(list[:i], func(w []byte) bool { return bytes.Equal(v, w) }) {
			continue
		}
		j := slices.IndexFunc(vs, func(c VersionCount) bool { return c.Hash == string(v) })
		switch {
		case j >= 0 && j < last:
			vs[j].Count++
			continue
		case j < 0 && len(vs) < last:
			vs = append(vs, VersionCount{Hash: string(v), Count: 1})
			continue
		case j < 0 && len(vs) == last:
			vs = append(vs, VersionCount{Hash: string(v)})
		case j < 0:
			vs[last].Hash = OtherVersions
		}
		if !inLast {
			vs[last].Count++
			inLast = true
		}
	}
	return vs
}

// OtherVersions is the hash reported for the robots.txt versions past
// MaxVersions.
const OtherVersions = "(other)"
