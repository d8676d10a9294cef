//! Ranking the catalogue for a query in Portuguese, Spanish or English.
//!
//! Each tool is indexed once per process by the words of its name, title, description
//! and argument names (and their enumerated values), each word weighed by where it
//! appears (name 3, title 2, description 1, arguments ½) and by how few tools have it.
//! A query is cut into concepts: a phrase of the vocabulary kept beside the catalogue
//! (`catalogue/vocabulary.tsv`: "contas a pagar" → payable, "dar baixa" → settle or pay)
//! is one concept with its alternatives; any other word is a concept of its own. A
//! tool scores, for each concept, its best alternative; tools are ranked by their sum,
//! then in catalogue order, so the same query always answers the same list. Words are
//! compared lower-case, without accents, and singular ("payables" = "payable").

use std::collections::HashMap;
use std::sync::OnceLock;

use serde_json::Value;

use crate::mcp::listing;
use crate::mcp::tools;

const VOCABULARY: &str = include_str!("../catalogue/vocabulary.tsv");

/// Words that say nothing about which tool (articles, prepositions, pronouns).
const STOPWORDS: &[&str] = &[
    "a", "o", "as", "os", "de", "da", "do", "das", "dos", "e", "em", "no", "na", "nos", "nas", "um", "uma", "para",
    "pra", "por", "pelo", "pela", "com", "que", "meu", "minha", "meus", "minhas", "nosso", "nossa", "nossos", "nossas",
    "the", "of", "to", "for", "an", "and", "in", "on", "my", "our", "is", "it", "its", "el", "la", "lo", "los", "las",
    "del", "al", "y", "en", "un", "una", "con", "mi", "mis", "su", "sus", "nuestro", "nuestra", "me", "se", "esta",
    "este", "esse", "essa", "isso", "this", "that", "with", "from", "or", "ou", "be", "are", "todo", "todos", "toda",
    "todas", "all", "i", "we", "eu", "yo", "quero", "quiero", "want", "please",
];

/// A query's concept: its alternatives (any one matches).
type Concept = Vec<String>;

struct Index {
    /// Per tool, in catalogue order: each word and its weight (the best place it is in).
    tools: Vec<HashMap<String, f32>>,
    /// Each word's weight by rarity: ln(1 + tools / tools with it).
    rarity: HashMap<String, f32>,
    /// The vocabulary's phrases (words) and the concepts they stand for, longest first.
    phrases: Vec<(Vec<String>, Vec<Concept>)>,
}

/// Lower-case, accents removed.
fn fold(c: char) -> char {
    match c {
        'á' | 'à' | 'â' | 'ã' | 'ä' | 'Á' | 'À' | 'Â' | 'Ã' => 'a',
        'é' | 'ê' | 'è' | 'É' | 'Ê' => 'e',
        'í' | 'Í' => 'i',
        'ó' | 'ô' | 'õ' | 'ò' | 'Ó' | 'Ô' | 'Õ' => 'o',
        'ú' | 'ü' | 'Ú' | 'Ü' => 'u',
        'ç' | 'Ç' => 'c',
        'ñ' | 'Ñ' => 'n',
        c => c.to_ascii_lowercase(),
    }
}

/// A word's singular, roughly: "categories" → "category", "taxes" → "tax",
/// "payables" → "payable", "contas" → "conta".
fn singular(word: &str) -> String {
    if word.len() > 4 && word.ends_with("ies") {
        return format!("{}y", &word[..word.len() - 3]);
    }
    // Portuguese "-ões" ("conciliações", "sugestões") and Spanish "-ciones".
    if word.len() > 5 && word.ends_with("oes") {
        return format!("{}ao", &word[..word.len() - 3]);
    }
    if word.len() > 7 && word.ends_with("ciones") {
        return word[..word.len() - 2].to_string();
    }
    if word.len() > 3 && word.ends_with("xes") {
        return word[..word.len() - 2].to_string();
    }
    if word.len() > 3 && word.ends_with('s') && !word.ends_with("ss") && !word.ends_with("us") && !word.ends_with("is")
    {
        return word[..word.len() - 1].to_string();
    }
    word.to_string()
}

/// The words of a text: folded, split on anything but letters and digits, singular.
fn words(text: &str) -> Vec<String> {
    text.chars()
        .map(fold)
        .collect::<String>()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(singular)
        .collect()
}

fn is_stopword(word: &str) -> bool {
    STOPWORDS.contains(&word)
}

/// The words that say something, each once.
fn content_words(text: &str) -> Vec<String> {
    let mut out: Vec<String> = words(text).into_iter().filter(|w| !is_stopword(w)).collect();
    out.dedup();
    out
}

/// The concepts of a vocabulary expansion: space-separated concepts, each one's
/// alternatives separated by `|`.
fn concepts(expansion: &str) -> Vec<Concept> {
    expansion
        .split_whitespace()
        .map(|concept| concept.split('|').flat_map(words).collect::<Concept>())
        .filter(|c| !c.is_empty())
        .collect()
}

/// The argument names, descriptions and enumerated values of an input schema (one
/// level deep, and the items of arrays).
fn argument_words(schema: &Value, out: &mut Vec<String>) {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else { return };
    for (name, property) in properties {
        out.extend(content_words(name));
        out.extend(property.get("description").and_then(Value::as_str).map(content_words).unwrap_or_default());
        for values in [property.get("enum"), property.get("items").and_then(|i| i.get("enum"))].into_iter().flatten() {
            for value in values.as_array().into_iter().flatten().filter_map(Value::as_str) {
                out.extend(content_words(value));
            }
        }
    }
}

fn index() -> &'static Index {
    static INDEX: OnceLock<Index> = OnceLock::new();
    INDEX.get_or_init(build)
}

fn build() -> Index {
    let mut keywords: HashMap<&str, &str> = HashMap::new();
    let mut phrases = Vec::new();
    for line in VOCABULARY.lines().filter(|l| !l.trim().is_empty() && !l.starts_with('#')) {
        let Some((phrase, expansion)) = line.split_once('\t') else { continue };
        match phrase.strip_prefix('@') {
            Some(tool) => {
                keywords.insert(tool, expansion);
            }
            None => phrases.push((words(phrase), concepts(expansion))),
        }
    }
    phrases.sort_by_key(|(words, _)| std::cmp::Reverse(words.len()));
    let listed = listing::all();
    let mut tools = Vec::new();
    for (tool, parts) in tools::catalogue().zip(listed) {
        let mut weights: HashMap<String, f32> = HashMap::new();
        let mut weigh = |words: Vec<String>, weight: f32| {
            for word in words {
                let kept = weights.entry(word).or_insert(0.0);
                *kept = kept.max(weight);
            }
        };
        let mut arguments = Vec::new();
        if let Ok(schema) = serde_json::from_str::<Value>(parts.input) {
            argument_words(&schema, &mut arguments);
        }
        weigh(arguments, 0.5);
        weigh(content_words(tool.description), 1.0);
        weigh(content_words(tool.title), 2.0);
        if let Some(extra) = keywords.get(tool.name) {
            weigh(content_words(extra), 2.0);
        }
        weigh(content_words(tool.name.strip_prefix("finance_").unwrap_or(tool.name)), 3.0);
        tools.push(weights);
    }
    let mut having: HashMap<String, usize> = HashMap::new();
    for weights in &tools {
        for word in weights.keys() {
            *having.entry(word.clone()).or_default() += 1;
        }
    }
    let count = tools.len() as f32;
    let rarity = having.into_iter().map(|(word, n)| (word, (1.0 + count / n as f32).ln())).collect();
    Index { tools, rarity, phrases }
}

/// The concepts of a query: the vocabulary's phrases (the longest that matches at each
/// place), then every other word that says something.
fn query_concepts(index: &Index, query: &str) -> Vec<Concept> {
    let words = words(query);
    let mut out = Vec::new();
    let mut at = 0;
    'words: while at < words.len() {
        for (phrase, concepts) in &index.phrases {
            if words[at..].starts_with(phrase) {
                out.extend(concepts.iter().cloned());
                at += phrase.len();
                continue 'words;
            }
        }
        if !is_stopword(&words[at]) {
            out.push(vec![words[at].clone()]);
        }
        at += 1;
    }
    out.dedup();
    out
}

/// The tools at `candidates` (catalogue positions) that match `query`, best first;
/// ties in catalogue order. Tools that match nothing are left out.
pub fn rank(query: &str, candidates: &[usize]) -> Vec<usize> {
    let index = index();
    let concepts = query_concepts(index, query);
    let mut scored: Vec<(f32, usize)> = candidates
        .iter()
        .filter_map(|&at| {
            let weights = index.tools.get(at)?;
            let score: f32 = concepts
                .iter()
                .map(|concept| {
                    concept
                        .iter()
                        .map(|word| weights.get(word).map_or(0.0, |w| w * index.rarity.get(word).unwrap_or(&0.0)))
                        .fold(0.0, f32::max)
                })
                .sum();
            (score > 0.0).then_some((score, at))
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.into_iter().map(|(_, at)| at).collect()
}

/// A description's summary: its first sentence, whole (a period outside parentheses,
/// brackets, braces and quotes, followed by a space or the end, and not an abbreviation
/// such as "e.g."). A description is written so that its first sentence carries what
/// changes an agent's next step (a gate a record waits at, the token a download needs):
/// a summary never cuts a clause or a remark out of a sentence.
pub fn summary(description: &str) -> &str {
    let mut depth = 0usize;
    let mut quoted = false;
    for (at, c) in description.char_indices() {
        match c {
            '"' | '`' => quoted = !quoted,
            '(' | '[' | '{' if !quoted => depth += 1,
            ')' | ']' | '}' if !quoted => depth = depth.saturating_sub(1),
            '.' if depth == 0 && !quoted => {
                let ends = description[at + 1..].starts_with(' ');
                let before = &description[..at];
                let abbreviation = ["e.g", "i.e"].iter().any(|a| before.ends_with(a));
                if ends && !abbreviation {
                    return &description[..=at];
                }
            }
            _ => {}
        }
    }
    description
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_folded_and_singular() {
        assert_eq!(words("Contas a Pagar vencidas"), ["conta", "a", "pagar", "vencida"]);
        assert_eq!(words("categories, taxes; lançamentos"), ["category", "tax", "lancamento"]);
        assert_eq!(words("finance_cost_centers_list"), ["finance", "cost", "center", "list"]);
        assert_eq!(words("conciliações conciliaciones"), ["conciliacao", "conciliacion"]);
    }

    #[test]
    fn a_phrase_of_the_vocabulary_is_one_concept() {
        let index = index();
        let concepts = query_concepts(index, "dar baixa nas contas a pagar");
        assert!(concepts.iter().any(|c| c.contains(&"settle".to_string())), "{concepts:?}");
        assert!(concepts.iter().any(|c| c.contains(&"payable".to_string())), "{concepts:?}");
        assert!(!concepts.iter().any(|c| c.contains(&"dar".to_string())), "{concepts:?}");
    }

    #[test]
    fn a_summary_is_the_first_sentence_whole() {
        assert_eq!(summary("Lists bills to pay. Filters: status."), "Lists bills to pay.");
        assert_eq!(
            summary("Deletes a company nothing uses (else the error lists what does). Asks first."),
            "Deletes a company nothing uses (else the error lists what does)."
        );
        assert_eq!(summary("Stops it (status a. b) here; it stays. More."), "Stops it (status a. b) here; it stays.");
        assert_eq!(summary("Filters, e.g. {\"a\": \"b. c\"}. Then more."), "Filters, e.g. {\"a\": \"b. c\"}.");
        assert_eq!(summary("For \"how late. is it\". Next."), "For \"how late. is it\".");
        assert_eq!(summary("No period at the end"), "No period at the end");
    }

    #[test]
    fn the_same_query_ranks_the_same_and_nothing_unrelated() {
        let all: Vec<usize> = (0..tools::catalogue().count()).collect();
        assert_eq!(rank("contas a pagar vencidas", &all), rank("contas a pagar vencidas", &all));
        assert!(rank("zzzz qqqq", &all).is_empty());
    }
}
