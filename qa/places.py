"""Names of countries, US states and continents: what "which country/state" questions ask for."""

from __future__ import annotations

import re

COUNTRIES = """Afghanistan|Albania|Algeria|Andorra|Angola|Antigua and Barbuda|Argentina|Armenia|Australia|
Austria|Azerbaijan|Bahamas|Bahrain|Bangladesh|Barbados|Belarus|Belgium|Belize|Benin|Bhutan|Bolivia|
Bosnia and Herzegovina|Bosnia|Botswana|Brazil|Brunei|Bulgaria|Burkina Faso|Burundi|Cambodia|Cameroon|
Canada|Cape Verde|Central African Republic|Chad|Chile|China|Colombia|Comoros|Congo|Costa Rica|Croatia|
Cuba|Cyprus|Czech Republic|Czechia|Denmark|Djibouti|Dominica|Dominican Republic|East Timor|Ecuador|
Egypt|El Salvador|England|Equatorial Guinea|Eritrea|Estonia|Eswatini|Ethiopia|Fiji|Finland|France|
Gabon|Gambia|Georgia|Germany|Ghana|Greece|Greenland|Grenada|Guatemala|Guinea|Guinea-Bissau|Guyana|
Haiti|Honduras|Hong Kong|Hungary|Iceland|India|Indonesia|Iran|Iraq|Ireland|Israel|Italy|Ivory Coast|
Jamaica|Japan|Jordan|Kazakhstan|Kenya|Kiribati|Kosovo|Kuwait|Kyrgyzstan|Laos|Latvia|Lebanon|Lesotho|
Liberia|Libya|Liechtenstein|Lithuania|Luxembourg|Madagascar|Malawi|Malaysia|Maldives|Mali|Malta|
Marshall Islands|Mauritania|Mauritius|Mexico|Micronesia|Moldova|Monaco|Mongolia|Montenegro|Morocco|
Mozambique|Myanmar|Namibia|Nauru|Nepal|Netherlands|New Zealand|Nicaragua|Niger|Nigeria|North Korea|
North Macedonia|Northern Ireland|Norway|Oman|Pakistan|Palau|Palestine|Panama|Papua New Guinea|Paraguay|
Peru|Philippines|Poland|Portugal|Puerto Rico|Qatar|Romania|Russia|Rwanda|Saint Lucia|Samoa|San Marino|
Saudi Arabia|Scotland|Senegal|Serbia|Seychelles|Sierra Leone|Singapore|Slovakia|Slovenia|
Solomon Islands|Somalia|South Africa|South Korea|South Sudan|Spain|Sri Lanka|Sudan|Suriname|Sweden|
Switzerland|Syria|Taiwan|Tajikistan|Tanzania|Thailand|Togo|Tonga|Trinidad and Tobago|Tunisia|Turkey|
Turkmenistan|Tuvalu|Uganda|Ukraine|United Arab Emirates|United Kingdom|United States|Uruguay|
Uzbekistan|Vanuatu|Vatican City|Venezuela|Vietnam|Wales|Yemen|Zambia|Zimbabwe|UK|US|U.S.|USA|UAE"""
US_STATES = """Alabama|Alaska|Arizona|Arkansas|California|Colorado|Connecticut|Delaware|Florida|Georgia|
Hawaii|Idaho|Illinois|Indiana|Iowa|Kansas|Kentucky|Louisiana|Maine|Maryland|Massachusetts|Michigan|
Minnesota|Mississippi|Missouri|Montana|Nebraska|Nevada|New Hampshire|New Jersey|New Mexico|New York|
North Carolina|North Dakota|Ohio|Oklahoma|Oregon|Pennsylvania|Rhode Island|South Carolina|South Dakota|
Tennessee|Texas|Utah|Vermont|Virginia|Washington|West Virginia|Wisconsin|Wyoming"""
# Nationality words that stand for their country in "the Japanese prime minister".
_DEMONYMS = """Afghanistan: Afghan, Afghans; Australia: Australian, Australians; Brazil: Brazilian;
Canada: Canadian, Canadians; China: Chinese; Colombia: Colombian; Egypt: Egyptian; France: French;
Germany: German, Germans; India: Indian, Indians; Iran: Iranian; Iraq: Iraqi; Israel: Israeli, Israelis;
Italy: Italian, Italians; Japan: Japanese; Mexico: Mexican, Mexicans; Netherlands: Dutch;
Pakistan: Pakistani; Poland: Polish; Russia: Russian, Russians; Saudi Arabia: Saudi, Saudis;
South Korea: South Korean; North Korea: North Korean; Spain: Spanish; Sweden: Swedish;
Turkey: Turkish; Ukraine: Ukrainian, Ukrainians; United Kingdom: British, Britons; Finland: Finnish;
Norway: Norwegian; Greece: Greek; Sri Lanka: Sri Lankan; Chile: Chilean; Argentina: Argentine;
Peru: Peruvian; Philippines: Filipino; Vietnam: Vietnamese; Taiwan: Taiwanese; Hungary: Hungarian;
Ireland: Irish; Europe: European; Africa: African; Asia: Asian"""
DEMONYMS = {d.strip().lower(): place.strip() for entry in _DEMONYMS.replace("\n", " ").split(";")
            for place, words in [entry.split(":")] for d in words.split(",")}
CONTINENTS = "Africa|Antarctica|Asia|Europe|North America|South America|Oceania|Australia"


def _names(block: str) -> frozenset[str]:
    return frozenset(n.strip().lower() for n in block.replace("\n", "").split("|"))


_BY_NOUN = {"country": _names(COUNTRIES), "nation": _names(COUNTRIES), "state": _names(US_STATES),
            "continent": _names(CONTINENTS)}
ALL = frozenset().union(*_BY_NOUN.values())


def place_kind(question: str) -> str | None:
    """Which list a question's place noun asks for ("country", "state", ...), if any."""
    m = re.search(r"\b(?:which|what)\s+(?:[\w’'-]+\s+){0,2}?(countr(?:y|ies)|nations?|states?|continents?)\b",
                  question, re.IGNORECASE)
    if not m:
        return None
    word = m.group(1).lower()
    return "country" if word.startswith("countr") else word.rstrip("s")


def is_place(name: str, kind: str | None = None) -> bool:
    """True when name is a known country, US state or continent (of that kind, if given)."""
    key = re.sub(r"^the\s+", "", name.strip().lower())
    return key in (_BY_NOUN[kind] if kind else ALL)
