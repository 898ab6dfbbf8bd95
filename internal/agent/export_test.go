package agent

// PlainWords returns the candidate of every word of ua as the scanner
// reads it, in header order, without the bounds and filters of Tokenize:
// the plain reading that tests of the group choice compare with.
func PlainWords(ua string) []string {
	var out []string
	for sc := newScanner(ua); sc.nextPiece(); {
		if sc.prun > sc.pstart {
			out = append(out, ua[sc.pstart:sc.prun])
		}
	}
	return out
}
