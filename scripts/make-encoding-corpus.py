"""Writes the labelled legacy-encoding corpus the unit tests and `bench/encodings.ts` read.

    python3 scripts/make-encoding-corpus.py

Python's own codecs are the reference: its CJK test files (Lib/test/cjkencodings, each with its
UTF-8 twin) and, for single-byte encodings, short texts encoded here. Run once; the output is
committed, so the tests do not need Python.
"""
import json
import os
import shutil
import test

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, 'packages', 'core', 'test', 'fixtures', 'encodings')
CJK = os.path.join(os.path.dirname(test.__file__), 'cjkencodings')

# Python's test files: name → Python codec. HZ and ISO-2022 are 7-bit, so valid UTF-8 as they are.
CJK_FILES = {
    'big5': 'big5',
    'big5hkscs': 'big5hkscs',
    'cp949': 'cp949',
    'euc_jisx0213': 'euc_jisx0213',
    'euc_jp': 'euc_jp',
    'euc_kr': 'euc_kr',
    'gb18030': 'gb18030',
    'gb2312': 'gb2312',
    'gbk': 'gbk',
    'johab': 'johab',
    'shift_jis': 'shift_jis',
    'shift_jisx0213': 'shift_jisx0213',
}

TEXTS = {
    'fr': "Le cœur déçu mais l'âme plutôt naïve, Louÿs rêva de crapaüter en canoë au delà des îles, "
    "près du mälström où brûlent les novæ. « Ça coûte 5 € », dit-il à l'élève.\n",
    'de': 'Falsches Üben von Xylophonmusik quält jeden größeren Zwerg. Grüße aus Köln, '
    'schöne Größe, hübsche Bäume über der Brücke.\n',
    'pl': 'Zażółć gęślą jaźń. Pchnąć w tę łódź jeża lub ośm skrzyń fig. Ćma śpi w źródle, '
    'żółw łazi po łące.\n',
    'cs': 'Příliš žluťoučký kůň úpěl ďábelské ódy. Hleď, toť čarovný je loužek, kde hnědý '
    'ďatel stále čeká.\n',
    'ru': 'Съешь же ещё этих мягких французских булок, да выпей чаю. Широкая электрификация '
    'южных губерний даст мощный толчок подъёму сельского хозяйства.\n',
    'uk': 'Чуєш їх, доцю, га? Кумедна ж ти, прощайся без ґольфів! Жебракують філософи при '
    'ґанку церкви в Гадячі.\n',
    'el': 'Ξεσκεπάζω την ψυχοφθόρα βδελυγμία. Γαζίες και μυρτιές δεν θα βρω πια στο χρυσαφί '
    'ξέφωτο.\n',
    'tr': 'Pijamalı hasta yağız şoföre çabucak güvendi. Küçük çocuklar bahçede oynarken '
    'öğretmen şarkı söyledi.\n',
    'he': 'דג סקרן שט בים מאוכזב ולפתע מצא חברה. עטלף אבק נס דרך מזגן שהתפוצץ כי חם.\n',
    'ar': 'نص حكيم له سر قاطع وذو شأن عظيم مكتوب على ثوب أخضر ومغلف بجلد أزرق. '
    'صِف خَلقَ خَودِ كَمِثلِ الشَمسِ إِذ بَزَغَت.\n',
    'lt': 'Įlinkdama fechtuotojo špaga sublykčiojusi pragręžė apvalų arbūzą. Ąžuolas, '
    'ėglė ir šermukšnis žaliuoja.\n',
    'th': 'เป็นมนุษย์สุดประเสริฐเลิศคุณค่า กว่าบรรดาฝูงสัตว์เดรัจฉาน จงฝ่าฟันพัฒนาวิชาการ\n',
}

SINGLE_BYTE = [
    ('fr', 'cp1252'),
    ('de', 'cp1252'),
    ('de', 'latin_1'),
    ('pl', 'cp1250'),
    ('cs', 'cp1250'),
    ('pl', 'iso8859_2'),
    ('ru', 'cp1251'),
    ('uk', 'cp1251'),
    ('ru', 'koi8_r'),
    ('ru', 'iso8859_5'),
    ('el', 'cp1253'),
    ('el', 'iso8859_7'),
    ('tr', 'cp1254'),
    ('he', 'cp1255'),
    ('he', 'iso8859_8'),
    ('ar', 'cp1256'),
    ('lt', 'cp1257'),
    ('th', 'cp874'),
]


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    samples = []
    for name, codec in CJK_FILES.items():
        shutil.copy(os.path.join(CJK, f'{name}.txt'), os.path.join(OUT, f'{name}.txt'))
        shutil.copy(os.path.join(CJK, f'{name}-utf8.txt'), os.path.join(OUT, f'{name}.utf8'))
        samples.append({'file': f'{name}.txt', 'codec': codec, 'source': 'Python Lib/test/cjkencodings'})
    for lang, codec in SINGLE_BYTE:
        text = TEXTS[lang] * 2
        encoded = text.encode(codec)
        stem = f'{lang}-{codec}'
        with open(os.path.join(OUT, f'{stem}.txt'), 'wb') as f:
            f.write(encoded)
        with open(os.path.join(OUT, f'{stem}.utf8'), 'wb') as f:
            f.write(encoded.decode(codec).encode('utf-8'))
        samples.append({'file': f'{stem}.txt', 'codec': codec, 'source': 'scripts/make-encoding-corpus.py'})
    with open(os.path.join(OUT, 'corpus.json'), 'w') as f:
        json.dump(samples, f, indent=2)
        f.write('\n')


main()
