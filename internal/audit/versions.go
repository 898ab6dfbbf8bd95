package audit

import (
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
func countJudged(vs []VersionCount, list []string) []VersionCount {
	const last = MaxVersions - 1
	inLast := false
	for i, v := range list {
		if slices.Contains(list[:i], v) {
			continue
		}
		j := slices.IndexFunc(vs, func(c VersionCount) bool { return c.Hash == v })
		switch {
		case j >= 0 && j < last:
			vs[j].Count++
			continue
		case j < 0 && len(vs) < last:
			vs = append(vs, VersionCount{Hash: v, Count: 1})
			continue
		case j < 0 && len(vs) == last:
			vs = append(vs, VersionCount{Hash: v})
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
