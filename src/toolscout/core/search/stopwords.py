"""Stop words of the search tokenizer: scikit-learn's English stop-word list (318 words), and the
words of it that tool names are made of.

The list is copied so that tokenizing does not import scikit-learn (whose import pulls in Rich
since 1.9, which the core must not load).

Source: ``sklearn/feature_extraction/_stop_words.py`` (scikit-learn 1.9.1, BSD-3-Clause; the list
itself comes from the Glasgow Information Retrieval Group). ``tests/core/search/test_tokenize.py`` checks
that it still equals scikit-learn's.
"""

ENGLISH_STOP_WORDS: frozenset[str] = frozenset(
    ["a", "about", "above", "across", "after", "afterwards", "again", "against", "all", "almost", "alone", "along", "already", "also", "although", "always", "am", "among", "amongst", "amoungst", "amount", "an", "and", "another", "any", "anyhow", "anyone", "anything", "anyway", "anywhere", "are", "around", "as", "at", "back", "be", "became", "because", "become", "becomes", "becoming", "been", "before", "beforehand", "behind", "being", "below", "beside", "besides", "between", "beyond", "bill", "both", "bottom", "but", "by", "call", "can", "cannot", "cant", "co", "con", "could", "couldnt", "cry", "de", "describe", "detail", "do", "done", "down", "due", "during", "each", "eg", "eight", "either", "eleven", "else", "elsewhere", "empty", "enough", "etc", "even", "ever", "every", "everyone", "everything", "everywhere", "except", "few", "fifteen", "fifty", "fill", "find", "fire", "first", "five", "for", "former", "formerly", "forty", "found", "four", "from", "front", "full", "further", "get", "give", "go", "had", "has", "hasnt", "have", "he", "hence", "her", "here", "hereafter", "hereby", "herein", "hereupon", "hers", "herself", "him", "himself", "his", "how", "however", "hundred", "i", "ie", "if", "in", "inc", "indeed", "interest", "into", "is", "it", "its", "itself", "keep", "last", "latter", "latterly", "least", "less", "ltd", "made", "many", "may", "me", "meanwhile", "might", "mill", "mine", "more", "moreover", "most", "mostly", "move", "much", "must", "my", "myself", "name", "namely", "neither", "never", "nevertheless", "next", "nine", "no", "nobody", "none", "noone", "nor", "not", "nothing", "now", "nowhere", "of", "off", "often", "on", "once", "one", "only", "onto", "or", "other", "others", "otherwise", "our", "ours", "ourselves", "out", "over", "own", "part", "per", "perhaps", "please", "put", "rather", "re", "same", "see", "seem", "seemed", "seeming", "seems", "serious", "several", "she", "should", "show", "side", "since", "sincere", "six", "sixty", "so", "some", "somehow", "someone", "something", "sometime", "sometimes", "somewhere", "still", "such", "system", "take", "ten", "than", "that", "the", "their", "them", "themselves", "then", "thence", "there", "thereafter", "thereby", "therefore", "therein", "thereupon", "these", "they", "thick", "thin", "third", "this", "those", "though", "three", "through", "throughout", "thru", "thus", "to", "together", "too", "top", "toward", "towards", "twelve", "twenty", "two", "un", "under", "until", "up", "upon", "us", "very", "via", "was", "we", "well", "were", "what", "whatever", "when", "whence", "whenever", "where", "whereafter", "whereas", "whereby", "wherein", "whereupon", "wherever", "whether", "which", "while", "whither", "who", "whoever", "whole", "whom", "whose", "why", "will", "with", "within", "without", "would", "yet", "you", "your", "yours", "yourself", "yourselves"]
)

#: Words of :data:`ENGLISH_STOP_WORDS` that the search tokenizer keeps as terms: the verbs tool
#: names are made of (``find_symbol``, ``get_file_contents``, ``move_file``, ``git_show``,
#: ``describe_table``, ``browser_take_screenshot``, ``browser_fill_form``, ``kv_put``,
#: ``CreateCall``) and ``name`` (``set_defined_name``). Each is a word of some tool name among
#: the 1,673 tools of ``shared/bench-data/catalogs`` (``get`` of 292); as stop words they made a
#: query that spells such a name ("find symbol", "move file") lose its first word. A query that
#: is a request ("can you show me…") drops them again (:func:`.tokenize.query_terms`).
#: Left out: ``give`` (one name, ``give_feedback_to_desktop_commander``, against "give me" in
#: requests), and the prepositions and pronouns that occur in names (``create_or_update_file``,
#: ``deploy_to_heroku``, ``maintenance_on``): they rarely tell tools apart.
TOOL_WORDS: frozenset[str] = frozenset(
    ["call", "describe", "fill", "find", "get", "move", "name", "put", "show", "take"]
)
