// Where generated businesses and prospects are: countries (ISO 3166-1 alpha-2), their regions
// (ISO 3166-2 subdivision codes) and cities, with the naming conventions of the provider's records
// (lower-case country and region names, "City, REGION, CC" location texts). Country and region names
// are the provider document's vocabulary, the patterns of its `country_name` and `region_name`.

export interface City {
  readonly name: string;
  /** First digits of local postal codes; the generator appends the rest. */
  readonly zipPrefix: string;
  /** Urban area label used by the `city_region` filter. */
  readonly metro: string;
}

export interface Region {
  /** Subdivision part of the ISO 3166-2 code, upper case (`CA` of `US-CA`). */
  readonly code: string;
  readonly name: string;
  readonly cities: readonly City[];
}

export interface Country {
  readonly code: string;
  readonly name: string;
  /** Share of generated businesses headquartered here (relative). */
  readonly weight: number;
  readonly tld: string;
  readonly phonePrefix: string;
  /** Postal code length after the prefix. */
  readonly zipDigits: number;
  readonly regions: readonly Region[];
}

function cities(...entries: [name: string, zipPrefix: string, metro?: string][]): City[] {
  return entries.map(([name, zipPrefix, metro]) => ({ name, zipPrefix, metro: metro ?? name }));
}

export const COUNTRIES: readonly Country[] = [
  {
    code: 'US',
    name: 'united states',
    weight: 40,
    tld: 'com',
    phonePrefix: '+1',
    zipDigits: 2,
    regions: [
      {
        code: 'CA',
        name: 'california',
        cities: cities(
          ['San Francisco', '941', 'San Francisco--Oakland'],
          ['Los Angeles', '900', 'Los Angeles--Long Beach--Anaheim'],
          ['San Diego', '921'],
          ['San Jose', '951'],
        ),
      },
      {
        code: 'NY',
        name: 'new york',
        cities: cities(
          ['New York', '100', 'New York--Jersey City--Newark'],
          ['Buffalo', '142'],
          ['Rochester', '146'],
        ),
      },
      {
        code: 'TX',
        name: 'texas',
        cities: cities(
          ['Austin', '787'],
          ['Houston', '770'],
          ['Dallas', '752', 'Dallas--Fort Worth--Arlington'],
        ),
      },
      {
        code: 'WA',
        name: 'washington',
        cities: cities(['Seattle', '981', 'Seattle--Tacoma'], ['Bellevue', '980', 'Seattle--Tacoma']),
      },
      { code: 'IL', name: 'illinois', cities: cities(['Chicago', '606']) },
      {
        code: 'MA',
        name: 'massachusetts',
        cities: cities(['Boston', '021'], ['Cambridge', '021', 'Boston']),
      },
      {
        code: 'FL',
        name: 'florida',
        cities: cities(
          ['Miami', '331', 'Miami--Fort Lauderdale'],
          ['Orlando', '328'],
          ['Tampa', '336', 'Tampa--St. Petersburg'],
        ),
      },
      {
        code: 'CO',
        name: 'colorado',
        cities: cities(['Denver', '802', 'Denver--Aurora'], ['Boulder', '803']),
      },
      { code: 'GA', name: 'georgia', cities: cities(['Atlanta', '303']) },
      { code: 'NC', name: 'north carolina', cities: cities(['Raleigh', '276'], ['Charlotte', '282']) },
      { code: 'OR', name: 'oregon', cities: cities(['Portland', '972']) },
      { code: 'PA', name: 'pennsylvania', cities: cities(['Philadelphia', '191'], ['Pittsburgh', '152']) },
      {
        code: 'UT',
        name: 'utah',
        cities: cities(['Salt Lake City', '841'], ['Provo', '846', 'Provo--Orem']),
      },
      { code: 'MN', name: 'minnesota', cities: cities(['Minneapolis', '554', 'Minneapolis--St. Paul']) },
      { code: 'OH', name: 'ohio', cities: cities(['Columbus', '432'], ['Cleveland', '441']) },
    ],
  },
  {
    code: 'GB',
    name: 'united kingdom',
    weight: 10,
    tld: 'co.uk',
    phonePrefix: '+44',
    zipDigits: 3,
    regions: [
      {
        code: 'ENG',
        name: 'england',
        cities: cities(['London', 'EC1'], ['Manchester', 'M1 '], ['Bristol', 'BS1'], ['Leeds', 'LS1']),
      },
      { code: 'SCT', name: 'scotland', cities: cities(['Edinburgh', 'EH1'], ['Glasgow', 'G1 ']) },
      { code: 'WLS', name: 'wales; cymru', cities: cities(['Cardiff', 'CF1']) },
    ],
  },
  {
    code: 'CA',
    name: 'canada',
    weight: 6,
    tld: 'ca',
    phonePrefix: '+1',
    zipDigits: 3,
    regions: [
      { code: 'ON', name: 'ontario', cities: cities(['Toronto', 'M5V'], ['Ottawa', 'K1P']) },
      { code: 'QC', name: 'quebec', cities: cities(['Montreal', 'H2Y']) },
      { code: 'BC', name: 'british columbia', cities: cities(['Vancouver', 'V6B']) },
      { code: 'AB', name: 'alberta', cities: cities(['Calgary', 'T2P']) },
    ],
  },
  {
    code: 'DE',
    name: 'germany',
    weight: 6,
    tld: 'de',
    phonePrefix: '+49',
    zipDigits: 3,
    regions: [
      { code: 'BE', name: 'berlin', cities: cities(['Berlin', '10']) },
      { code: 'BY', name: 'bayern', cities: cities(['Munich', '80']) },
      { code: 'HH', name: 'hamburg', cities: cities(['Hamburg', '20']) },
      { code: 'HE', name: 'hessen', cities: cities(['Frankfurt', '60']) },
      { code: 'NW', name: 'nordrhein-westfalen', cities: cities(['Cologne', '50'], ['Düsseldorf', '40']) },
    ],
  },
  {
    code: 'FR',
    name: 'france',
    weight: 5,
    tld: 'fr',
    phonePrefix: '+33',
    zipDigits: 3,
    regions: [
      { code: 'IDF', name: 'île-de-france', cities: cities(['Paris', '75']) },
      { code: 'ARA', name: 'auvergne-rhône-alpes', cities: cities(['Lyon', '69']) },
      {
        code: 'PAC',
        name: 'provence-alpes-côte-d’azur',
        cities: cities(['Marseille', '13'], ['Nice', '06']),
      },
      { code: 'OCC', name: 'occitanie', cities: cities(['Toulouse', '31']) },
    ],
  },
  {
    code: 'IN',
    name: 'india',
    weight: 7,
    tld: 'in',
    phonePrefix: '+91',
    zipDigits: 3,
    regions: [
      { code: 'KA', name: 'karnataka', cities: cities(['Bengaluru', '560']) },
      { code: 'MH', name: 'maharashtra', cities: cities(['Mumbai', '400'], ['Pune', '411']) },
      { code: 'DL', name: 'delhi', cities: cities(['New Delhi', '110']) },
      { code: 'TG', name: 'telangana', cities: cities(['Hyderabad', '500']) },
    ],
  },
  {
    code: 'AU',
    name: 'australia',
    weight: 4,
    tld: 'com.au',
    phonePrefix: '+61',
    zipDigits: 2,
    regions: [
      { code: 'NSW', name: 'new south wales', cities: cities(['Sydney', '20']) },
      { code: 'VIC', name: 'victoria', cities: cities(['Melbourne', '30']) },
      { code: 'QLD', name: 'queensland', cities: cities(['Brisbane', '40']) },
    ],
  },
  {
    code: 'NL',
    name: 'netherlands',
    weight: 3,
    tld: 'nl',
    phonePrefix: '+31',
    zipDigits: 2,
    regions: [
      { code: 'NH', name: 'noord-holland', cities: cities(['Amsterdam', '10']) },
      { code: 'ZH', name: 'zuid-holland', cities: cities(['Rotterdam', '30']) },
      { code: 'UT', name: 'utrecht', cities: cities(['Utrecht', '35']) },
    ],
  },
  {
    code: 'IL',
    name: 'israel',
    weight: 3,
    tld: 'co.il',
    phonePrefix: '+972',
    zipDigits: 5,
    regions: [
      { code: 'TA', name: 'tel-aviv', cities: cities(['Tel Aviv', '61']) },
      { code: 'JM', name: 'jerusalem', cities: cities(['Jerusalem', '91']) },
      { code: 'HA', name: 'hefa', cities: cities(['Haifa', '31']) },
    ],
  },
  {
    code: 'ES',
    name: 'spain',
    weight: 3,
    tld: 'es',
    phonePrefix: '+34',
    zipDigits: 3,
    regions: [
      { code: 'MD', name: 'madrid, comunidad de', cities: cities(['Madrid', '28']) },
      { code: 'CT', name: 'catalunya', cities: cities(['Barcelona', '08']) },
      {
        code: 'VC',
        name: 'valenciana, comunidad / valenciana, comunitat',
        cities: cities(['Valencia', '46']),
      },
    ],
  },
  {
    code: 'SE',
    name: 'sweden',
    weight: 2,
    tld: 'se',
    phonePrefix: '+46',
    zipDigits: 3,
    regions: [
      { code: 'AB', name: 'stockholms län', cities: cities(['Stockholm', '11']) },
      { code: 'O', name: 'västra götalands län', cities: cities(['Gothenburg', '41']) },
    ],
  },
  {
    code: 'SG',
    name: 'singapore',
    weight: 2,
    tld: 'sg',
    phonePrefix: '+65',
    zipDigits: 4,
    regions: [{ code: '01', name: 'central singapore', cities: cities(['Singapore', '01']) }],
  },
  {
    code: 'BR',
    name: 'brazil',
    weight: 3,
    tld: 'com.br',
    phonePrefix: '+55',
    zipDigits: 3,
    regions: [
      { code: 'SP', name: 'são paulo', cities: cities(['São Paulo', '01']) },
      { code: 'RJ', name: 'rio de janeiro', cities: cities(['Rio de Janeiro', '20']) },
    ],
  },
  {
    code: 'JP',
    name: 'japan',
    weight: 2,
    tld: 'jp',
    phonePrefix: '+81',
    zipDigits: 4,
    regions: [
      { code: '13', name: 'tokyo', cities: cities(['Tokyo', '100']) },
      { code: '27', name: 'osaka', cities: cities(['Osaka', '530']) },
    ],
  },
  {
    code: 'IE',
    name: 'ireland',
    weight: 2,
    tld: 'ie',
    phonePrefix: '+353',
    zipDigits: 4,
    regions: [{ code: 'D', name: 'dublin', cities: cities(['Dublin', 'D02']) }],
  },
  {
    code: 'CH',
    name: 'switzerland',
    weight: 1,
    tld: 'ch',
    phonePrefix: '+41',
    zipDigits: 2,
    regions: [
      { code: 'ZH', name: 'zürich', cities: cities(['Zurich', '80']) },
      { code: 'GE', name: 'genève', cities: cities(['Geneva', '12']) },
    ],
  },
  {
    code: 'MX',
    name: 'mexico',
    weight: 1,
    tld: 'mx',
    phonePrefix: '+52',
    zipDigits: 3,
    regions: [
      { code: 'CMX', name: 'ciudad de méxico', cities: cities(['Mexico City', '06']) },
      { code: 'JAL', name: 'jalisco', cities: cities(['Guadalajara', '44']) },
    ],
  },
];

export const COUNTRY_WEIGHTS: readonly number[] = COUNTRIES.map((country) => country.weight);

export interface RegionEntry {
  /** Position in REGION_LIST: the `region_id` column of prospects. */
  id: number;
  country: Country;
  /** Position of the country in COUNTRIES. */
  countryId: number;
  region: Region;
  /** `us-ca` */
  iso: string;
}

/** Every region of every country, numbered: prospects store a region id, from which the country follows. */
export const REGION_LIST: readonly RegionEntry[] = COUNTRIES.flatMap((country, countryId) =>
  country.regions.map((region) => ({
    country,
    countryId,
    region,
    iso: `${country.code}-${region.code}`.toLowerCase(),
  })),
).map((entry, id) => ({ ...entry, id }));

const REGION_IDS = new Map<Region, number>(REGION_LIST.map((entry) => [entry.region, entry.id]));

export function regionIdOf(region: Region): number {
  const id = REGION_IDS.get(region);
  if (id === undefined) throw new RangeError(`region ${region.name} is not in the catalogue`);
  return id;
}

export const STREET_NAMES: readonly string[] = [
  'Market Street',
  'Main Street',
  'Harbor Road',
  'Mill Lane',
  'Station Road',
  'Park Avenue',
  'Oak Street',
  'Elm Avenue',
  'Riverside Drive',
  'King Street',
  'Queen Street',
  'Victoria Road',
  'Church Street',
  'High Street',
  'Lake View Road',
  'Hillcrest Avenue',
  'Cedar Lane',
  'Maple Avenue',
  'Commerce Way',
  'Innovation Drive',
  'Technology Parkway',
  'Bridge Street',
  'Canal Street',
  'Garden Road',
  'Union Square',
];

/** `City, REGION, CC`: the location text of the `city_region_country` filter. */
export function cityRegionCountry(city: string, regionCode: string, countryCode: string): string {
  return `${city}, ${regionCode}, ${countryCode}`;
}

/** `Metro, REGION`: the urban-area text of the `city_region` filter. */
export function cityRegion(metro: string, regionCode: string): string {
  return `${metro}, ${regionCode}`;
}

/** ISO 3166-2 code in the provider's lower-case form, `us-ca`. */
export function regionIsoCode(countryCode: string, regionCode: string): string {
  return `${countryCode}-${regionCode}`.toLowerCase();
}
