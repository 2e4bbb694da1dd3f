"""Pure helpers every room uses: time, errors, names that become paths, bounded input, text
normalisation, entry validation and the rules loader."""
