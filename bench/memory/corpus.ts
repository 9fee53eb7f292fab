/**
 * A generated memory corpus: facts "User's {relation} {Name} {verb} {object}
 * in {city}" over 25 topics × 10 relations × 20 cities, every
 * (topic, relation, city) used once so each question has exactly one answer.
 * Direct questions reuse the fact's words; paraphrased ones share no content
 * word with it (synonyms for the relation, the country for the city, the
 * category for the object, and no name).
 */
import type { MemoryFact } from "../../packages/harness/src/memory";

/** [fact verb, base verb, paraphrase question start, objects]. */
const TOPICS: Array<[string, string, string, string[]]> = [
  ["plays", "play", "Which instrument is handled by", ["cello", "oboe", "harp", "banjo", "bassoon", "ukulele", "clarinet", "tuba"]],
  ["teaches", "teach", "Which school subject is taught by", ["chemistry", "geometry", "latin", "biology", "economics", "geography", "physics", "history"]],
  ["grows", "grow", "Which plant is cultivated by", ["tomatoes", "orchids", "basil", "lavender", "pumpkins", "bonsai", "sunflowers", "chillies"]],
  ["drives", "drive", "Which automobile belongs to", ["volvo", "tesla", "fiat", "subaru", "peugeot", "skoda", "mazda", "lada"]],
  ["collects", "collect", "What hobby hoard is kept by", ["stamps", "coins", "vinyl", "fossils", "postcards", "seashells", "comics", "clocks"]],
  ["cooks", "cook", "Which dish gets prepared by", ["paella", "ramen", "goulash", "risotto", "moussaka", "pierogi", "tagine", "lasagna"]],
  ["speaks", "speak", "Which tongue is known by", ["finnish", "swahili", "tagalog", "welsh", "basque", "icelandic", "tamil", "hebrew"]],
  ["owns", "own", "Which pet animal lives with", ["parrot", "tortoise", "ferret", "iguana", "hamster", "axolotl", "chinchilla", "gecko"]],
  ["studies", "study", "Which academic field occupies", ["linguistics", "astrophysics", "neuroscience", "archaeology", "statistics", "botany", "philosophy", "robotics"]],
  ["builds", "build", "Which craft project keeps busy", ["kayaks", "birdhouses", "drones", "guitars", "furniture", "telescopes", "robots", "sheds"]],
  ["reads", "read", "Which literary genre appeals to", ["thrillers", "poetry", "biographies", "westerns", "manga", "sagas", "fables", "memoirs"]],
  ["paints", "paint", "Which artwork motif is favoured by", ["landscapes", "portraits", "seascapes", "abstracts", "murals", "miniatures", "frescoes", "icons"]],
  ["brews", "brew", "Which beverage is made at home by", ["kombucha", "cider", "mead", "stout", "sake", "kvass", "porter", "lager"]],
  ["trains", "train", "Which working dog type is schooled by", ["beagles", "collies", "huskies", "poodles", "terriers", "retrievers", "boxers", "corgis"]],
  ["repairs", "repair", "Which broken gadget gets fixed by", ["bicycles", "watches", "radios", "laptops", "typewriters", "cameras", "scooters", "organs"]],
  ["designs", "design", "Which thing gets sketched professionally by", ["bridges", "logos", "gardens", "fonts", "kitchens", "jewellery", "sneakers", "posters"]],
  ["sells", "sell", "Which merchandise is offered for sale by", ["antiques", "spices", "carpets", "honey", "lamps", "ceramics", "hats", "perfume"]],
  ["photographs", "photograph", "Which camera subject attracts", ["birds", "weddings", "volcanoes", "glaciers", "insects", "skylines", "horses", "storms"]],
  ["knits", "knit", "Which woollen item is made by", ["scarves", "sweaters", "mittens", "socks", "blankets", "beanies", "shawls", "cardigans"]],
  ["races", "race", "Which competitive sport engages", ["sailboats", "motorbikes", "greyhounds", "canoes", "karts", "pigeons", "rowboats", "triathlons"]],
  ["programs", "program", "Which coding language is used by", ["haskell", "fortran", "elixir", "cobol", "kotlin", "erlang", "clojure", "pascal"]],
  ["bakes", "bake", "Which oven treat is produced by", ["baguettes", "croissants", "pretzels", "bagels", "strudel", "macarons", "scones", "brioche"]],
  ["climbs", "climb", "Which mountain type is scaled by", ["volcanoes", "glaciers", "boulders", "cliffs", "ridges", "peaks", "crags", "towers"]],
  ["restores", "restore", "Which old possession is renovated by", ["castles", "chapels", "barns", "windmills", "lighthouses", "cottages", "mansions", "carousels"]],
  ["rescues", "rescue", "Which creature gets saved by", ["hedgehogs", "owls", "otters", "foxes", "badgers", "bats", "swans", "seals"]],
];
/** [relation, paraphrase]. */
const RELATIONS: Array<[string, string]> = [
  ["manager", "boss"],
  ["dentist", "tooth doctor"],
  ["neighbour", "person next door"],
  ["landlord", "property owner I rent from"],
  ["cousin", "aunt's kid"],
  ["mentor", "adviser"],
  ["physician", "family GP"],
  ["coach", "trainer"],
  ["accountant", "bookkeeper"],
  ["lawyer", "attorney"],
];
/** [city, country]. */
const CITIES: Array<[string, string]> = [
  ["Porto", "Portugal"], ["Lyon", "France"], ["Osaka", "Japan"], ["Gdansk", "Poland"], ["Tartu", "Estonia"],
  ["Bergen", "Norway"], ["Cork", "Ireland"], ["Graz", "Austria"], ["Ghent", "Belgium"], ["Aarhus", "Denmark"],
  ["Turku", "Finland"], ["Brno", "Czechia"], ["Split", "Croatia"], ["Cusco", "Peru"], ["Mombasa", "Kenya"],
  ["Da Nang", "Vietnam"], ["Busan", "Korea"], ["Cebu", "Philippines"], ["Hobart", "Australia"], ["Quebec", "Canada"],
];
const SYLLABLES = ["ka", "lo", "mi", "ren", "tu", "sa", "vel", "do", "ri", "na", "bo", "zen", "fa", "li", "gor", "pe"];

/** A deterministic PRNG (mulberry32). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A benchmark question and the id of the one fact answering it. */
export interface Question {
  text: string;
  factId: string;
  paraphrased: boolean;
}

function name(i: number): string {
  const a = SYLLABLES[i % 16];
  const b = SYLLABLES[Math.floor(i / 16) % 16];
  const c = SYLLABLES[Math.floor(i / 256) % 16];
  const s = `${a}${b}${c}`;
  return s[0].toUpperCase() + s.slice(1);
}

/** `n` facts (unique topic × relation × city up to 5,000; beyond that, extra filler facts). */
export function generateFacts(n: number, seed = 7): Array<MemoryFact & { meta: { topic: number; rel: number; city: number; object: string; name: string } }> {
  const rand = rng(seed);
  const combos: Array<[number, number, number]> = [];
  for (let c = 0; c < CITIES.length; c++) for (let r = 0; r < RELATIONS.length; r++) for (let t = 0; t < TOPICS.length; t++) combos.push([t, r, c]);
  for (let i = combos.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [combos[i], combos[j]] = [combos[j], combos[i]];
  }
  return Array.from({ length: n }, (_, i) => {
    const [t, r, c] = combos[i % combos.length];
    const object = TOPICS[t][3][Math.floor(rand() * 8)];
    const nm = name(i);
    const filler = i >= combos.length ? ` (note ${i})` : "";
    return {
      id: `fact_${i.toString(16).padStart(8, "0")}`,
      content: `User's ${RELATIONS[r][0]} ${nm} ${TOPICS[t][0]} ${object} in ${CITIES[c][0]}${filler}`,
      category: ["context", "knowledge", "preference", "behavior", "goal"][i % 5],
      confidence: Math.round((0.7 + rand() * 0.3) * 100) / 100,
      createdAt: new Date(Date.UTC(2026, 0, 1) + Math.floor(rand() * 300) * 86_400_000).toISOString(),
      source: "bench",
      meta: { topic: t, rel: r, city: c, object, name: nm },
    };
  });
}

/** `count` questions over distinct facts; the last third are paraphrased. */
export function generateQuestions(facts: ReturnType<typeof generateFacts>, count: number, seed = 11): Question[] {
  const rand = rng(seed);
  const picked = new Set<number>();
  while (picked.size < count) picked.add(Math.floor(rand() * Math.min(facts.length, 5000)));
  const direct = Math.round((count * 2) / 3);
  return [...picked].map((i, k) => {
    const f = facts[i];
    const { topic, rel, city, name: nm } = f.meta;
    if (k < direct) return { text: `What does my ${RELATIONS[rel][0]} ${nm} ${TOPICS[topic][1]} in ${CITIES[city][0]}?`, factId: f.id, paraphrased: false };
    return { text: `${TOPICS[topic][2]} my ${RELATIONS[rel][1]} over in ${CITIES[city][1]}?`, factId: f.id, paraphrased: true };
  });
}
