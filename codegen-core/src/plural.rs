//! The plural controller-gen gives a kind (flect's `Pluralize`, lower-cased),
//! to warn where it differs from the plural kube-codegen uses (client-gen's
//! rules, `ident::pluralize`): a CRD that controller-gen wrote
//! for a kind is named after its plural, and a CRD written here with another
//! plural is another CRD.
//!
//! flect looks the kind's last word up in a dictionary of irregular English
//! plurals, then tries suffix rules in order, and otherwise appends `s`
//! (nothing when the word already ends in `s`). The words and rules below
//! are that behaviour, checked against flect itself in
//! `tests/tests/flect_plurals.rs`.

/// A word of the dictionary: its plural (`None`: the same word), whether its
/// plural (and the alternative) are known as plurals (`plural_known`), and
/// whether it applies to the whole word only (`exact`), not as the end of a
/// longer one.
struct Word {
    singular: &'static str,
    plural: Option<&'static str>,
    alternative: Option<&'static str>,
    plural_known: bool,
    exact: bool,
}

const fn w(singular: &'static str, plural: &'static str) -> Word {
    Word { singular, plural: Some(plural), alternative: None, plural_known: true, exact: false }
}

const fn alt(singular: &'static str, plural: &'static str, alternative: &'static str) -> Word {
    Word { singular, plural: Some(plural), alternative: Some(alternative), plural_known: true, exact: false }
}

const fn exact(singular: &'static str, plural: &'static str) -> Word {
    Word { singular, plural: Some(plural), alternative: None, plural_known: true, exact: true }
}

/// A plural that is not read back as this word's.
const fn one_way(singular: &'static str, plural: &'static str) -> Word {
    Word { singular, plural: Some(plural), alternative: None, plural_known: false, exact: false }
}

const fn uncountable(singular: &'static str) -> Word {
    Word { singular, plural: None, alternative: None, plural_known: true, exact: false }
}

/// The irregular words, in flect's order (later words' rules are tried
/// first).
const DICTIONARY: &[Word] = &[
    w("aircraft", "aircraft"),
    alt("beef", "beef", "beefs"),
    w("bison", "bison"),
    Word { singular: "blues", plural: Some("blues"), alternative: None, plural_known: false, exact: false },
    w("chassis", "chassis"),
    w("deer", "deer"),
    alt("fish", "fish", "fishes"),
    w("moose", "moose"),
    w("police", "police"),
    alt("salmon", "salmon", "salmons"),
    w("series", "series"),
    w("sheep", "sheep"),
    alt("shrimp", "shrimp", "shrimps"),
    w("species", "species"),
    alt("swine", "swine", "swines"),
    alt("trout", "trout", "trouts"),
    alt("tuna", "tuna", "tunas"),
    w("you", "you"),
    w("child", "children"),
    exact("ox", "oxen"),
    w("foot", "feet"),
    w("goose", "geese"),
    w("man", "men"),
    w("human", "humans"),
    exact("louse", "lice"),
    w("mouse", "mice"),
    w("tooth", "teeth"),
    w("woman", "women"),
    exact("die", "dice"),
    w("person", "people"),
    alt("adieu", "adieux", "adieus"),
    w("fabliau", "fabliaux"),
    alt("bureau", "bureaus", "bureaux"),
    w("criterion", "criteria"),
    alt("ganglion", "ganglia", "ganglions"),
    alt("lexicon", "lexica", "lexicons"),
    alt("mitochondrion", "mitochondria", "mitochondrions"),
    w("noumenon", "noumena"),
    w("phenomenon", "phenomena"),
    w("taxon", "taxa"),
    w("media", "media"),
    Word { singular: "medium", plural: Some("media"), alternative: Some("mediums"), plural_known: false, exact: false },
    alt("stadium", "stadiums", "stadia"),
    alt("aquarium", "aquaria", "aquariums"),
    alt("auditorium", "auditoria", "auditoriums"),
    alt("symposium", "symposia", "symposiums"),
    alt("curriculum", "curriculums", "curricula"),
    w("quota", "quotas"),
    alt("alumnus", "alumni", "alumnuses"),
    w("bacillus", "bacilli"),
    alt("cactus", "cacti", "cactuses"),
    w("coccus", "cocci"),
    alt("focus", "foci", "focuses"),
    alt("locus", "loci", "locuses"),
    alt("nucleus", "nuclei", "nucleuses"),
    alt("octopus", "octupuses", "octopi"),
    alt("radius", "radii", "radiuses"),
    w("syllabus", "syllabi"),
    alt("corpus", "corpora", "corpuses"),
    w("genus", "genera"),
    w("alumna", "alumnae"),
    w("vertebra", "vertebrae"),
    w("differentia", "differentiae"),
    w("minutia", "minutiae"),
    w("vita", "vitae"),
    w("larva", "larvae"),
    w("postcava", "postcavae"),
    w("praecava", "praecavae"),
    w("uva", "uvae"),
    alt("apex", "apices", "apexes"),
    alt("codex", "codices", "codexes"),
    alt("index", "indices", "indexes"),
    alt("latex", "latices", "latexes"),
    alt("vertex", "vertices", "vertexes"),
    alt("vortex", "vortices", "vortexes"),
    alt("appendix", "appendices", "appendixes"),
    alt("radix", "radices", "radixes"),
    alt("helix", "helices", "helixes"),
    exact("axis", "axes"),
    w("crisis", "crises"),
    one_way("ellipsis", "ellipses"),
    w("genesis", "geneses"),
    w("oasis", "oases"),
    w("thesis", "theses"),
    w("testis", "testes"),
    w("base", "bases"),
    one_way("basis", "bases"),
    exact("alias", "aliases"),
    w("vedalia", "vedalias"),
    exact("use", "uses"),
    w("abuse", "abuses"),
    w("cause", "causes"),
    w("clause", "clauses"),
    w("cruse", "cruses"),
    w("excuse", "excuses"),
    w("fuse", "fuses"),
    w("house", "houses"),
    w("misuse", "misuses"),
    w("muse", "muses"),
    w("pause", "pauses"),
    w("ache", "aches"),
    w("topaz", "topazes"),
    alt("buffalo", "buffaloes", "buffalos"),
    w("potato", "potatoes"),
    w("tomato", "tomatoes"),
    uncountable("equipment"),
    uncountable("information"),
    uncountable("jeans"),
    uncountable("money"),
    uncountable("news"),
    uncountable("rice"),
    alt("dwarf", "dwarfs", "dwarves"),
    alt("hoof", "hoofs", "hooves"),
    w("thief", "thieves"),
    w("chive", "chives"),
    w("hive", "hives"),
    w("move", "moves"),
    w("movie", "movies"),
    w("cookie", "cookies"),
    w("pretorium", "pretoriums"),
    w("agenda", "agendas"),
    alt("formula", "formulas", "formulae"),
    w("shoe", "shoes"),
    exact("toe", "toes"),
    w("graffiti", "graffiti"),
    exact("ID", "IDs"),
];

/// Suffix rules, singular ending → plural ending, in the order they are
/// tried (after the dictionary's words as endings).
const SUFFIXES: &[(&str, &str)] = &[
    ("tive", "tives"),
    ("eaf", "eaves"),
    ("oaf", "oaves"),
    ("afe", "aves"),
    ("arf", "arves"),
    ("rfe", "rves"),
    ("rf", "rves"),
    ("lf", "lves"),
    ("fe", "ves"),
    ("ay", "ays"),
    ("ey", "eys"),
    ("oy", "oys"),
    ("quy", "quies"),
    ("uy", "uys"),
    ("y", "ies"),
    ("eau", "eaux"),
    ("bula", "bulae"),
    ("dula", "bulae"),
    ("lula", "bulae"),
    ("nula", "bulae"),
    ("vula", "bulae"),
    ("hedron", "hedra"),
    ("ium", "ia"),
    ("seum", "seums"),
    ("eum", "ea"),
    ("oum", "oa"),
    ("stracum", "straca"),
    ("dum", "da"),
    ("elum", "ela"),
    ("ilum", "ila"),
    ("olum", "ola"),
    ("ulum", "ula"),
    ("llum", "lla"),
    ("ylum", "yla"),
    ("imum", "ima"),
    ("ernum", "erna"),
    ("gnum", "gna"),
    ("brum", "bra"),
    ("crum", "cra"),
    ("terum", "tera"),
    ("serum", "sera"),
    ("trum", "tra"),
    ("antum", "anta"),
    ("atum", "ata"),
    ("entum", "enta"),
    ("etum", "eta"),
    ("itum", "ita"),
    ("otum", "ota"),
    ("utum", "uta"),
    ("ctum", "cta"),
    ("ovum", "ova"),
    ("trix", "trices"),
    ("iasis", "iases"),
    ("mesis", "meses"),
    ("kinesis", "kineses"),
    ("resis", "reses"),
    ("gnosis", "gnoses"),
    ("opsis", "opses"),
    ("ysis", "yses"),
    ("ouse", "ouses"),
    ("lause", "lauses"),
    ("us", "uses"),
    ("ch", "ches"),
    ("io", "ios"),
    ("sh", "shes"),
    ("ss", "sses"),
    ("ez", "ezzes"),
    ("iz", "izzes"),
    ("tz", "tzes"),
    ("zz", "zzes"),
    ("ano", "anos"),
    ("lo", "los"),
    ("to", "tos"),
    ("oo", "oos"),
    ("o", "oes"),
    ("x", "xes"),
    ("S", "Ses"),
];

/// Words flect keeps upper-case as parts of a name, and after which an
/// upper-case letter starts a new part (`DNSRecord` is `DNS` + `Record`).
const ACRONYMS: &[&str] = &[
    "ACK", "ACL", "ADSL", "AES", "ANSI", "API", "ARP", "ATM", "BGP", "BSS", "CCITT", "CHAP", "CIDR", "CIR", "CLI",
    "CMOS", "CPE", "CPU", "CRC", "CRT", "CSMA", "DCE", "DEC", "DES", "DHCP", "DMI", "DNS", "DRAM", "DSL", "DSLAM",
    "DTE", "EHA", "EIA", "EIGRP", "EOF", "ESS", "FCC", "FCS", "FDDI", "FTP", "GBIC", "GEPOF", "HDLC", "HTML", "HTTP",
    "HTTPS", "IANA", "ICMP", "ID", "IDF", "IDS", "IEEE", "IETF", "IMAP", "IP", "IPS", "ISDN", "ISP", "JSON", "JWT",
    "LACP", "LAN", "LAPB", "LAPF", "LLC", "MAC", "MC", "MDF", "MIB", "MPLS", "MTU", "NAC", "NAT", "NBMA", "NIC", "NRZ",
    "NRZI", "NVRAM", "OK", "OSI", "OSPF", "OUI", "PAP", "PAT", "PC", "PCM", "PDU", "PIM", "POP3", "POTS", "PPP",
    "PPTP", "PTT", "PVST", "RAM", "RARP", "RCP", "RFC", "RIP", "RLL", "ROM", "RSTP", "RTP", "SDLC", "SFD", "SFP",
    "SLARP", "SLIP", "SMTP", "SNA", "SNAP", "SNMP", "SOF", "SQL", "SRAM", "SSH", "SSID", "STP", "SYN", "TDM", "TFTP",
    "TIA", "TOFU", "UDP", "URI", "URL", "USB", "UTF8", "UTP", "UUID", "VC", "VLAN", "VLSM", "VPN", "W3C", "WAN", "WEP",
    "WPA", "WWW",
];

fn is_acronym(word: &str) -> bool {
    ACRONYMS.contains(&word.to_uppercase().as_str())
}

/// Characters that separate the words of a name.
fn is_separator(c: char) -> bool {
    matches!(c, '_' | ' ' | ':' | '-' | '/') || c.is_whitespace()
}

/// The words of a name, as flect splits it: before an upper-case letter
/// that follows a lower-case one or an acronym, and at separators; an
/// acronym is written in upper case.
fn words(name: &str) -> Vec<String> {
    let name = name.trim();
    if name.is_empty() {
        return Vec::new();
    }
    if is_acronym(name) {
        return vec![name.to_uppercase()];
    }
    let mut words = Vec::new();
    let push = |words: &mut Vec<String>, word: &str| {
        let word = word.trim().trim_matches(|c| matches!(c, '_' | ' ' | ':' | '-' | '/'));
        let word = if is_acronym(word) { word.to_uppercase() } else { word.to_string() };
        if !word.is_empty() {
            words.push(word);
        }
    };
    let mut current = String::new();
    let mut previous: Option<char> = None;
    for c in name.chars() {
        let starts_word = is_separator(c)
            || (c.is_uppercase() && !previous.is_some_and(char::is_uppercase))
            || (c.is_uppercase() && is_acronym(&current));
        if starts_word {
            push(&mut words, &current);
            current.clear();
            current.push(c);
        } else if c.is_alphanumeric() || c.is_ascii_punctuation() {
            current.push(c);
        } else {
            push(&mut words, &current);
            current.clear();
        }
        previous = Some(c);
    }
    push(&mut words, &current);
    words
}

/// The plural of `word` in the dictionary, looked up by its singular.
fn dictionary_plural(word: &str) -> Option<&'static str> {
    DICTIONARY.iter().find(|w| w.singular == word).map(|w| w.plural.unwrap_or(w.singular))
}

/// Whether `word` is a plural the dictionary knows (then it stays as it is).
fn is_known_plural(word: &str) -> bool {
    DICTIONARY.iter().any(|w| w.plural_known && (w.plural.unwrap_or(w.singular) == word || w.alternative == Some(word)))
}

/// `whole` with its ending `old` replaced by `new` (Go's `TrimSuffix`: when
/// `whole` does not end with `old`, `new` is appended).
fn replace_end(whole: &str, old: &str, new: &str) -> String {
    format!("{}{new}", whole.strip_suffix(old).unwrap_or(whole))
}

/// The plural controller-gen gives `kind` (its CRD's `spec.names.plural`,
/// lower-case).
pub fn controller_gen_plural(kind: &str) -> String {
    flect_pluralize(kind).to_lowercase()
}

fn flect_pluralize(name: &str) -> String {
    let parts = words(name);
    let Some(last) = parts.last() else { return String::new() };
    if let Some(plural) = dictionary_plural(name) {
        return plural.to_string();
    }
    if is_known_plural(name) {
        return name.to_string();
    }
    let lower = last.to_lowercase();
    if is_known_plural(&lower) {
        return name.to_string();
    }
    if let Some(plural) = dictionary_plural(&lower) {
        return replace_end(name, last, plural);
    }
    // The dictionary's words as endings of longer words, the last word
    // first, then the suffix rules; a word already ending in the plural
    // form is left alone.
    let words_as_endings =
        DICTIONARY.iter().rev().filter(|w| !w.exact).map(|w| (w.singular, w.plural.unwrap_or(w.singular)));
    for (singular, plural) in words_as_endings.chain(SUFFIXES.iter().copied()) {
        if last.ends_with(plural) {
            return name.to_string();
        }
        if last.ends_with(singular) {
            return replace_end(name, last, &replace_end(last, singular, plural));
        }
    }
    if lower.ends_with('s') {
        return name.to_string();
    }
    format!("{name}s")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plurals_of_kinds() {
        for (kind, plural) in [
            ("Student", "students"),
            ("Person", "people"),
            ("DatabasePerson", "databasepeople"),
            ("Policy", "policies"),
            ("Gateway", "gateways"),
            ("Index", "indices"),
            ("Endpoints", "endpoints"),
            ("Status", "statuses"),
            ("Ingress", "ingresses"),
            ("Repo", "repoes"),
            ("Proxy", "proxies"),
            ("Leaf", "leaves"),
            ("DNSRecord", "dnsrecords"),
            ("Media", "media"),
            ("Criterion", "criteria"),
        ] {
            assert_eq!(controller_gen_plural(kind), plural, "{kind}");
        }
    }

    #[test]
    fn words_of_names() {
        assert_eq!(words("DatabasePerson"), ["Database", "Person"]);
        assert_eq!(words("DNSRecord"), ["DNS", "Record"]);
        assert_eq!(words("HTTPRoute"), ["HTTP", "Route"]);
        assert_eq!(words("FooDns"), ["Foo", "DNS"]);
        assert_eq!(words("ABCThing"), ["ABCThing"]);
        assert_eq!(words("snake_case"), ["snake", "case"]);
    }
}
