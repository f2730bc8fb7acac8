import type { ClubDoc } from '../../data/models/club.model.js';
import { fieldLabel } from '../../data/school/labels.js';
import { SCHOOL_LIMITS } from '../../data/school/rules.js';
import type { StudentSelfField } from '../../data/school/student-fields.js';
import { field, select, type FieldError } from './components.js';
import { html, type Html } from './html.js';
import type { Lang } from './lang.js';
import type { Texts } from './texts/index.js';

/**
 * The inputs of a student's own fields: "My profile" (/console/profile) and the data
 * update asked at sign-in (`dataUpdateStep` in src/surfaces/web/login.ts) show the same controls
 * as the admin student form (src/surfaces/admin/students.ts), labelled by the data layer's field
 * names.
 */
export function studentFieldInputs(o: {
  readonly t: Texts;
  readonly lang: Lang;
  readonly fields: readonly StudentSelfField[];
  readonly values: Readonly<Record<string, string>>;
  readonly errors: readonly FieldError[];
  readonly clubs: readonly Pick<ClubDoc, '_id' | 'name' | 'type' | 'status'>[];
}): Html {
  const label = (name: string) => {
    const text = fieldLabel(name, o.lang);
    return o.lang === 'en' ? text.charAt(0).toUpperCase() + text.slice(1) : text;
  };
  const common = (name: StudentSelfField) => ({ name, label: label(name), value: o.values[name] ?? '', errors: o.errors });
  const clubOptions = (type: ClubDoc['type'], current: string | undefined) => [
    { value: '', label: o.t.dataUpdate.none },
    ...o.clubs
      .filter((c) => c.type === type && (c.status === 'ACTIVE' || String(c._id) === current))
      .map((c) => ({ value: String(c._id), label: c.name })),
  ];
  return html`${o.fields.map((name) => {
    switch (name) {
      case 'studentNumber':
        return field({ ...common(name), inputmode: 'numeric', maxlength: 4, required: true, hint: o.t.dataUpdate.studentNumberHint });
      case 'dormitoryRoom':
        return field({
          ...common(name),
          type: 'number',
          inputmode: 'numeric',
          min: SCHOOL_LIMITS.dormitoryRoom.min,
          max: SCHOOL_LIMITS.dormitoryRoom.max,
          hint: o.t.dataUpdate.roomHint,
        });
      case 'majorClubId':
        return select({ ...common(name), options: clubOptions('MAJOR_CLUB', o.values[name]) });
      case 'autonomousClubId':
        return select({ ...common(name), options: clubOptions('AUTONOMOUS_CLUB', o.values[name]) });
      case 'githubId':
        return field({ ...common(name), autocomplete: 'off', maxlength: 39, hint: o.t.admin.students.githubHint });
      case 'specialty':
        return field({ ...common(name), maxlength: SCHOOL_LIMITS.specialty.max });
    }
  })}`;
}
